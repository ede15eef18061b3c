import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../shared/db/client.js';
import { seedDatabase } from '../../shared/demo/seed.js';
import { importStackExchange } from '../../shared/stackexchange/import.js';
import { BEER_DUMP_DIR } from '../../shared/datasets.js';
import type { Progress } from '../../shared/progress.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * Bulk loads drop the secondary indexes and switch a trigger off inside their transaction: a load that fails
 * part-way must leave the schema and the rows exactly as it found them.
 */
async function state(database: Database) {
  const [row] = await database.query<Record<string, unknown>>(sql`
    SELECT (SELECT json_agg(indexdef ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public') AS indexes,
           (SELECT json_agg(tgname::text || ':' || tgenabled::text ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal) AS triggers,
           (SELECT count(*) FROM questions)::int AS questions,
           (SELECT count(*) FROM answers)::int AS answers,
           (SELECT count(*) FROM question_tags)::int AS question_tags,
           (SELECT count(*) FROM users)::int AS users,
           (SELECT json_agg(l ORDER BY scope) FROM list_counts l) AS list_counts`);
  return row;
}

/** A progress display that fails the load once `table` has received rows: a failure in the middle of it. */
const failingAt = (table: string): Progress => ({
  add(t) {
    if (t === table) throw new Error(`interrupted while loading ${table}`);
  },
  step() {},
  done() {},
});

describe('bulk loads are all or nothing', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it('a seed that fails after its first rows leaves the empty database, its indexes and triggers as they were', async () => {
    const before = await state(runtime.database);
    await expect(
      seedDatabase(runtime.database, { questions: 300, progress: failingAt('answers') }),
    ).rejects.toThrow(/interrupted while loading answers/);
    expect(await state(runtime.database)).toEqual(before);
  }, 120_000);

  it('a seed that fails while building indexes changes nothing either', async () => {
    const before = await state(runtime.database);
    await expect(
      seedDatabase(runtime.database, { questions: 300, progress: failingAt('indexes') }),
    ).rejects.toThrow(/interrupted/);
    expect(await state(runtime.database)).toEqual(before);
  }, 120_000);

  it('an import that fails part-way leaves the seeded database as it was', async () => {
    await seedDatabase(runtime.database, { questions: 200 });
    const before = await state(runtime.database);
    expect(before!.questions).toBe(200);
    await expect(
      importStackExchange(runtime.database, BEER_DUMP_DIR, { reset: true, progress: failingAt('indexes') }),
    ).rejects.toThrow(/interrupted/);
    expect(await state(runtime.database)).toEqual(before);
  }, 180_000);
});
