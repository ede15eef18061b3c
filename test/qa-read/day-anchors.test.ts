import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { dayAnchor } from '../../shared/db/repositories/seek.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addUser } from './fixtures.js';

/**
 * Deep page numbers of the lists by date (all questions, the unanswered ones, all answers, all comments) start their walk at the day that
 * holds their offset, found from the posts-per-day counters (seek.ts, dayAnchor). Every page must still be exactly the
 * list's order: on days of very different sizes, a day with nothing, posts on the day's first and last microsecond,
 * after posts changed their dates (the counters follow, migration 0026), and when the counters do not add up.
 */

const PER_PAGE = 100;

/**
 * Posts per UTC day, oldest first: uneven, one day without any, over several months and their boundaries, enough rows
 * for walks past the anchors' threshold.
 */
const DATED: [string, number][] = [
  ['2024-01-31', 950],
  ['2024-02-01', 40],
  ['2024-02-02', 0],
  ['2024-02-28', 1700],
  ['2024-02-29', 5],
  ['2024-03-01', 1250],
  ['2024-03-15', 300],
  ['2024-03-31', 1],
  ['2024-04-01', 680],
  ['2024-05-20', 274],
];
const DAYS = DATED.map(([, count]) => count);

/** Rows a page number must skip before the day counters are used (seek.ts, ANCHOR_MIN_SKIP). */
const ANCHORED_SKIP = 2000;

/** The rows before the day that holds row `skip` (0-based), days taken in the given order. */
function rowsBeforeDay(days: readonly number[], skip: number): number {
  let before = 0;
  for (const count of days) {
    if (skip < before + count) return before;
    before += count;
  }
  throw new Error('skip past the end');
}

const LISTS: { key: string; path: string; rows: string }[] = [
  { key: 'questions', path: '/api/questions?sort=newest', rows: 'questions' },
  { key: 'questions', path: '/api/questions?sort=unanswered', rows: 'questions WHERE answers_count = 0' },
  { key: 'answers', path: '/api/answers?sort=newest', rows: 'answers' },
  { key: 'comments', path: '/api/comments?sort=newest', rows: 'comments' },
  {
    key: 'questions',
    path: '/api/questions?sort=newest&category=901',
    rows: 'questions WHERE category_id = 901',
  },
  {
    key: 'questions',
    path: '/api/questions?sort=unanswered&category=901',
    rows: 'questions WHERE category_id = 901 AND answers_count = 0',
  },
  { key: 'users', path: '/api/users?sort=newest', rows: 'users' },
];

describe('deep pages by date start at the day counters', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const total = DAYS.reduce((a, b) => a + b, 0);

  /** The list's ids in its order, straight from the table. */
  async function reference(rows: string, direction: 'asc' | 'desc'): Promise<number[]> {
    const found = await runtime.database.query<{ id: number }>(
      sql`SELECT id FROM ${sql.raw(rows)} ORDER BY created_at ${sql.raw(direction)}, id ${sql.raw(direction)}`,
    );
    return found.map((r) => r.id);
  }

  /**
   * The pages that start at a day (they skip ANCHORED_SKIP rows or more from the nearer end), the pages just short of
   * that, the first and the last: each against its slice of the list.
   */
  async function expectPagesInOrder(path: string, key: string, expected: number[], mustAnchor: boolean) {
    const last = Math.ceil(expected.length / PER_PAGE);
    const skipped = (page: number) =>
      Math.min((page - 1) * PER_PAGE, expected.length - Math.min(page * PER_PAGE, expected.length));
    const pages = Array.from({ length: last }, (_, k) => k + 1).filter(
      (page) => page === 1 || page === last || skipped(page) >= ANCHORED_SKIP - 2 * PER_PAGE,
    );
    if (mustAnchor)
      expect(
        pages.some((page) => skipped(page) >= ANCHORED_SKIP),
        path,
      ).toBe(true);
    for (const page of pages) {
      const res = await app.inject(`${path}&limit=${PER_PAGE}&page=${page}`);
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(data.pagination.total_items).toBe(expected.length);
      expect((data[key] as { id: number }[]).map((r) => r.id)).toEqual(
        expected.slice((page - 1) * PER_PAGE, page * PER_PAGE),
      );
    }
  }

  /** `mustAnchor`: every list is long enough for some page to start at a day (the moves below shorten some). */
  async function expectEveryPageInOrder(mustAnchor = true) {
    for (const list of LISTS) {
      for (const order of ['desc', 'asc'] as const) {
        const expected = await reference(list.rows, order);
        await expectPagesInOrder(`${list.path}&order=${order}`, list.key, expected, mustAnchor);
      }
    }
  }

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    const author = (await addUser(runtime.database.db)).id;
    // Each day's posts spread over the whole day, its first and last microsecond included; ids do not follow dates.
    for (const [date, count] of DATED) {
      if (count === 0) continue;
      await runtime.database.query(sql`
        INSERT INTO questions (author_id, title, slug, content, created_at)
        SELECT ${author}, 'Question ' || ${date} || ' ' || i, 'q-' || ${date} || '-' || i, 'Body',
               ${date}::timestamp AT TIME ZONE 'UTC'
                 + CASE i WHEN 1 THEN interval '0' WHEN 2 THEN interval '1 day' - interval '1 microsecond'
                          ELSE ((i * 7919) % 86400) * interval '1 second' END
        FROM generate_series(1, ${count}) i`);
    }
    // Users joined over the same months as the posts (the question's author among them, joined now).
    await runtime.database.query(sql`
      INSERT INTO users (username, display_name, created_at)
      SELECT 'member' || i, 'Member ' || i, '2024-01-31T00:00:00Z'::timestamptz + ((i * 7919) % (110 * 86400)) * interval '1 second'
      FROM generate_series(1, 4600) i`);
    // Most questions in one category (its lists long enough for the anchors), some in another, some in none.
    await runtime.database.query(sql`INSERT INTO categories (id, name, slug, description, icon)
      VALUES (901, 'A', 'a', 'A', 'fa-a'), (902, 'B', 'b', 'B', 'fa-b')`);
    await runtime.database.query(sql`
      UPDATE questions SET category_id = CASE id % 10 WHEN 0 THEN NULL WHEN 5 THEN 902 ELSE 901 END`);
    // Every tenth question has ten answers (the others stay unanswered), every question a comment. Loaded as the
    // seed and the importer load (triggers off, then agora_recount()), which is also far quicker than a trigger run
    // per answer: the day counters then come from the recount.
    await runtime.database.db.transaction(async (tx) => {
      await tx.execute(sql`SET LOCAL session_replication_role = replica`);
      await tx.execute(sql`
        INSERT INTO answers (question_id, author_id, content, created_at)
        SELECT id, author_id, 'Answer', created_at + interval '1 microsecond' * k
        FROM questions, generate_series(1, 10) k WHERE id % 10 = 0`);
      await tx.execute(sql`
        INSERT INTO comments (question_id, author_id, content, created_at)
        SELECT id, author_id, 'Comment', created_at FROM questions`);
      await tx.execute(sql`SELECT agora_recount()`);
    });
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('finds the day that holds an offset, in either direction, from the counters alone', async () => {
    const db = runtime.database.db;
    for (const skip of [0, 273, 274, 1000, 2500, 3841, total - 1]) {
      const newest = await dayAnchor(db, 'questions', true, skip, total);
      expect(newest?.before).toBe(rowsBeforeDay([...DAYS].reverse(), skip));
      const oldest = await dayAnchor(db, 'questions', false, skip, total);
      expect(oldest?.before).toBe(rowsBeforeDay(DAYS, skip));
    }
    // Counters that do not add up to the list's total are not used.
    expect(await dayAnchor(db, 'questions', true, 1000, total + 1)).toBeUndefined();
    // The unanswered questions: nine in ten of each day's (ids do not follow the days, hence counted).
    const [unanswered] = await runtime.database.query<{ n: number; newest: number }>(
      sql`SELECT count(*)::int AS n, count(*) FILTER (WHERE created_at >= '2024-04-01')::int AS newest
          FROM questions WHERE answers_count = 0`,
    );
    // The first unanswered question before April starts a day: the April and May ones come before it.
    const deep = await dayAnchor(db, 'unanswered', true, unanswered!.newest, unanswered!.n);
    expect(deep?.before).toBe(unanswered!.newest);
  });

  it('the pages by number are the list in order, both directions', async () => {
    await expectEveryPageInOrder();
  });

  it('posts whose dates change move their day counts: the pages stay in order', async () => {
    // Across days, to an empty day, within a day, and to a day no post had.
    await runtime.database.query(sql`
      UPDATE questions SET created_at = created_at - interval '2 days' WHERE id % 5 = 0`);
    await runtime.database.query(sql`
      UPDATE answers SET created_at = '2024-02-02T12:00:00Z' WHERE id % 7 = 0`);
    await runtime.database.query(sql`
      UPDATE comments SET created_at = created_at + interval '1 hour' WHERE id % 4 = 0`);
    await runtime.database.query(sql`
      UPDATE comments SET created_at = '2023-12-01T00:00:00Z' WHERE id % 11 = 0`);
    // Users whose join date moves, and users who leave.
    await runtime.database.query(
      sql`UPDATE users SET created_at = created_at - interval '3 days' WHERE id % 6 = 0`,
    );
    await runtime.database.query(sql`DELETE FROM users WHERE id % 50 = 3 AND username LIKE 'member%'`);
    // Between categories, out of one and into one.
    await runtime.database.query(sql`UPDATE questions SET category_id = 902 WHERE id % 13 = 1`);
    await runtime.database.query(sql`UPDATE questions SET category_id = NULL WHERE id % 17 = 2`);
    await runtime.database.query(sql`UPDATE questions SET category_id = 901 WHERE id % 20 = 0`);
    // Questions answered for the first time leave the unanswered days; those that lose every answer come back.
    await runtime.database.query(sql`
      INSERT INTO answers (question_id, author_id, content, created_at)
      SELECT id, author_id, 'Late answer', created_at + interval '1 day' FROM questions WHERE id % 9 = 1`);
    await runtime.database.query(sql`DELETE FROM answers WHERE question_id % 40 = 0`);
    // The category's unanswered list is now too short for a page that starts at a day: its counters are checked
    // against a recount instead.
    await expectEveryPageInOrder(false);
    const categoryDays = async () =>
      JSON.stringify(
        await runtime.database.query(
          sql`SELECT scope, n::int FROM list_counts
              WHERE (scope LIKE '%:category%' OR scope LIKE '%:users') AND n <> 0 ORDER BY scope`,
        ),
      );
    const maintained = await categoryDays();
    await runtime.database.query(sql`SELECT agora_recount_list_days()`);
    await runtime.database.query(sql`SELECT agora_recount_dated()`);
    expect(maintained).toContain('category-unanswered:901');
    expect(maintained).toContain(':users');
    expect(maintained).toBe(await categoryDays());
  });

  it('counters that do not add up to the total: the pages are still in order (walked from the ends)', async () => {
    await runtime.database.query(
      sql`UPDATE list_counts SET n = n + 3
          WHERE scope IN ('day:2024-03-01:questions', 'month:2024-02:comments', 'month:2024-04:unanswered',
                          'day:2024-02-28:category:901', 'month:2024-03:category-unanswered:901')`,
    );
    await expectEveryPageInOrder(false);
  });
});
