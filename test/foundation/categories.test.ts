import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { categories } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

describe('GET /api/categories', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('answers an empty list on an empty database', async () => {
    const res = await app.inject('/api/categories');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { categories: [] } });
  });

  it('lists categories from PostgreSQL with the spec fields, sorted by name', async () => {
    await runtime.database.db.insert(categories).values([
      { name: 'Brewing', slug: 'brewing', description: 'Making beer', icon: 'fa-flask' },
      { name: 'Beer styles', slug: 'beer-styles', description: 'Ales and lagers', icon: 'fa-beer' },
    ]);
    const res = await app.inject('/api/categories');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.categories.map((c: { slug: string }) => c.slug)).toEqual(['beer-styles', 'brewing']);
    expect(body.data.categories[0]).toEqual({
      id: expect.any(Number),
      name: 'Beer styles',
      slug: 'beer-styles',
      description: 'Ales and lagers',
      questions_count: 0,
      icon: 'fa-beer',
    });
  });
});
