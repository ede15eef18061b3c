import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { addUser } from '../qa-read/fixtures.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

// Class 6 of issue 16: /users?sort=name sorts by a real collation, case-insensitively, on a C.UTF-8 database.

describe('sorting users by name', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    for (const displayName of ['AMA', 'zed', 'AHM', 'Émile', 'bob', 'Aadit M Shah', 'Bob'])
      await addUser(runtime.database.db, { displayName });
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('lists "Aadit M Shah" before "AHM" and "AMA", accents with their letter, equal names by id', async () => {
    const res = await app.inject('/api/users?sort=name&limit=100');
    expect(res.statusCode).toBe(200);
    const names = res.json().data.users.map((u: { display_name: string }) => u.display_name);
    expect(names).toEqual(['Aadit M Shah', 'AHM', 'AMA', 'bob', 'Bob', 'Émile', 'zed']);
  });

  it('pages through the same order', async () => {
    const first = (await app.inject('/api/users?sort=name&limit=3')).json().data.users;
    const second = (await app.inject('/api/users?sort=name&limit=3&page=2')).json().data.users;
    expect([...first, ...second].map((u: { display_name: string }) => u.display_name)).toEqual([
      'Aadit M Shah',
      'AHM',
      'AMA',
      'bob',
      'Bob',
      'Émile',
    ]);
  });
});
