import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
    // Written behind the app's back, as another process would: the app's read cache (which holds the empty list)
    // learns of it from PostgreSQL's change notification, a moment later.
    const res = await vi.waitFor(
      async () => {
        const r = await app.inject('/api/categories');
        expect(r.json().data.categories).toHaveLength(2);
        return r;
      },
      { timeout: 10_000 },
    );
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
