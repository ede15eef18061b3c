import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { migrateDatabase } from '../../shared/db/migrate.js';
import { preparedRows, type PlanChoice } from '../../shared/db/prepared.js';
import { questionJsonRepository } from '../../shared/db/repositories/question-json.js';
import { CANDIDATES, type SearchType } from '../../shared/db/repositories/search.js';
import { searchService } from '../../shared/qa/search.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addQuestion, addTag, addUser, at } from '../qa-read/fixtures.js';

/** The same posts, written the same way, into any database. */
async function fill(database: Database): Promise<void> {
  const db = database.db;
  const author = await addUser(db, { username: 'kettle_keeper', displayName: 'Kettle Keeper' });
  const other = await addUser(db, { username: 'brewmaster', displayName: 'Brew Master' });
  const hops = await addTag(db, 'hops');
  const first = await addQuestion(db, {
    authorId: author.id,
    title: 'Kettle scorching on a gas burner',
    slug: 'kettle-scorching',
    content: '<p>The kettle scorches &amp; the wort tastes burnt. Is the burner too hot?</p>',
    tagIds: [hops.id],
    createdAt: at(0),
  });
  await addAnswer(db, {
    questionId: first.id,
    authorId: other.id,
    content: 'Stir the kettle and lower the flame; a thicker kettle bottom spreads the heat.',
    votes: 3,
    createdAt: at(0),
  });
  for (let i = 0; i < CANDIDATES + 15; i++) {
    await addQuestion(db, {
      authorId: i % 2 === 0 ? author.id : other.id,
      title: i % 3 === 0 ? `Kettle question ${i}` : `Mash question ${i}`,
      slug: `question-${i}`,
      content: `Body ${i}: the kettle ${i % 5 === 0 ? 'kettle kettle' : ''} boiled ${i % 7 === 0 ? '"dry hopping"' : ''} over.`,
      createdAt: at(i + 1),
    });
  }
}

const QUERIES: [string, SearchType, number][] = [
  ['kettle', 'all', 1],
  ['kettle', 'all', 3],
  ['kettle', 'questions', 11],
  ['kettle', 'answers', 1],
  ['"dry hopping"', 'questions', 1],
  ['kettle -mash', 'all', 1],
  ['kettle keeper', 'all', 1],
  ['brew', 'users', 1],
  ['the', 'all', 1],
];

describe('search statements', () => {
  let runtime: TestRuntime;
  let pglite: Database;
  let dataDir: string;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-search-'));
    pglite = await openDatabase({ dataDir });
    await migrateDatabase(pglite);
    await fill(runtime.database);
    await fill(pglite);
  }, 180_000);

  /** A pool of one connection (per pool), so that the session that prepared a statement is the one asked about it. */
  const openOneConnection = () =>
    openDatabase({ databaseUrl: runtime.env.DATABASE_URL, dataDir: '', maxConnections: 1 });

  afterAll(async () => {
    await pglite?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await runtime?.close();
  });

  it('PostgreSQL (prepared statements) and PGlite (unnamed) answer every search the same', async () => {
    const onServer = searchService(runtime.database.db);
    const embedded = searchService(pglite.db);
    for (const [q, type, page] of QUERIES) {
      const params = { q, type, page, limit: 20 };
      const [a, b] = [await onServer.search(params), await embedded.search(params)];
      expect(b, `${q} ${type} page ${page}`).toEqual(a);
    }
    // Date windows (either bound or both) and the reversed order: their own variants, the same answers.
    for (const window of [
      { fromdate: at(10).toISOString() },
      { todate: String(at(3).getTime() / 1000) },
      { fromdate: '2024-01-01T00:05:00Z', todate: '2024-01-01T00:50:00Z', order: 'asc' as const },
      { order: 'asc' as const },
    ]) {
      for (const [q, type] of [
        ['kettle', 'all'],
        ['kettle keeper', 'all'],
        ['brew', 'users'],
        ['br', 'users'],
      ] as const) {
        const params = { q, type, page: 1, limit: 20, ...window };
        const [a, b] = [await onServer.search(params), await embedded.search(params)];
        expect(b, `${q} ${type} ${JSON.stringify(window)}`).toEqual(a);
      }
    }
    // Both give the lexemes the excerpts are marked by (PGlite as an array too).
    const [hit] = (await embedded.search({ q: 'scorching', type: 'questions', page: 1, limit: 20 })).results;
    expect(hit).toMatchObject({ excerpt: expect.stringContaining('<mark>scorches</mark>') });
    // The fixture is large enough that the bound on candidates shows.
    const bounded = await onServer.search({ q: 'kettle', type: 'questions', page: 1, limit: 20 });
    expect(bounded.pagination.total_items).toBe(CANDIDATES);
  }, 60_000);

  it('a search runs as one named prepared statement, reused whatever the text', async () => {
    const database = await openOneConnection();
    try {
      const search = searchService(database.db);
      for (const q of ['kettle', 'mash', 'burner', 'kettle -mash'])
        await search.search({ q, type: 'questions', page: 1, limit: 20 });
      await search.search({ q: 'kettle', type: 'all', page: 2, limit: 5 });
      const prepared = await database.query<{ statement: string }>(
        sql`SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'WITH hits AS%'`,
      );
      // One per variant of kinds (questions only; questions and answers), not one per search text.
      expect(prepared).toHaveLength(2);
      // Planned for each word, never with a generic plan: after many searches for a common word, a rare one must
      // still get the plan that suits it (the GIN index), not the common word's walk of the whole table.
      for (let i = 0; i < 8; i++) await search.search({ q: 'kettle', type: 'questions', page: 1, limit: 20 });
      await search.search({ q: 'burner', type: 'questions', page: 1, limit: 20 });
      const [plans] = await database.query<{ generic: number; custom: number }>(
        sql`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
            WHERE statement LIKE 'WITH hits AS%' ORDER BY custom_plans DESC LIMIT 1`,
      );
      expect(plans).toEqual({ generic: 0, custom: 13 });
    } finally {
      await database.close();
    }
  });

  it("a question's detail declares reusable plans: it runs on the second pool, on one generic plan", async () => {
    const database = await openOneConnection();
    try {
      const [first] = await database.query<{ id: number }>(sql`SELECT min(id)::int AS id FROM questions`);
      const questions = questionJsonRepository(database.db);
      for (let i = 0; i < 8; i++) {
        const detail = await questions.detail(first!.id, String(first!.id), {
          answers: true,
          comments: true,
        });
        expect(detail?.id).toBe(first!.id);
      }
      const statements = (db: typeof database.db, plans: PlanChoice['plans']) =>
        preparedRows<{ plans: string; generic: number; custom: number }>(
          db,
          `SELECT current_setting('plan_cache_mode') AS plans, generic_plans::int AS generic,
                  custom_plans::int AS custom
           FROM pg_prepared_statements WHERE statement LIKE 'SELECT q.id, json_strip_nulls%'`,
          [],
          { plans },
        );
      // Planned once, for any id: the plan is the same whatever the id.
      const [reusable] = await statements(database.db, 'reusable');
      expect(reusable).toEqual({ plans: 'force_generic_plan', custom: 0, generic: 8 });
      // The statement was never prepared on the first pool, whose connections still plan every call.
      expect(await statements(database.db, 'per-call')).toEqual([]);
      const [mode] = await database.query<{ plans: string }>(
        sql`SELECT current_setting('plan_cache_mode') AS plans`,
      );
      expect(mode?.plans).toBe('force_custom_plan');
    } finally {
      await database.close();
    }
  });
});
