import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { dayAnchor, type DayCounted } from '../../shared/db/repositories/seek.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addUser } from './fixtures.js';

/**
 * Deep page numbers of the lists by date (all questions, all answers, all comments) start their walk at the day that
 * holds their offset, found from the posts-per-day counters (seek.ts, dayAnchor). Every page must still be exactly the
 * list's order: on days of very different sizes, a day with nothing, posts on the day's first and last microsecond,
 * after posts changed their dates (the counters follow, migration 0026), and when the counters do not add up.
 */

const PER_PAGE = 100;

/** Posts per UTC day from 2024-03-01: uneven, one empty day, enough rows for walks past the anchor threshold. */
const DAYS = [900, 40, 0, 1700, 5, 1200, 300, 1, 650, 260];

const LISTS: { name: DayCounted; path: string; table: string }[] = [
  { name: 'questions', path: '/api/questions?sort=newest', table: 'questions' },
  { name: 'answers', path: '/api/answers?sort=newest', table: 'answers' },
  { name: 'comments', path: '/api/comments?sort=newest', table: 'comments' },
];

describe('deep pages by date start at the day counters', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const total = DAYS.reduce((a, b) => a + b, 0);

  /** The list's ids in its order, straight from the table. */
  async function reference(table: string, direction: 'asc' | 'desc'): Promise<number[]> {
    const found = await runtime.database.query<{ id: number }>(
      sql`SELECT id FROM ${sql.raw(table)} ORDER BY created_at ${sql.raw(direction)}, id ${sql.raw(direction)}`,
    );
    return found.map((r) => r.id);
  }

  async function everyPage(path: string, key: string, count: number): Promise<number[]> {
    const ids: number[] = [];
    for (let page = 1; page <= Math.ceil(count / PER_PAGE); page++) {
      const res = await app.inject(`${path}&limit=${PER_PAGE}&page=${page}`);
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(data.pagination.total_items).toBe(count);
      ids.push(...(data[key] as { id: number }[]).map((r) => r.id));
    }
    return ids;
  }

  async function expectEveryPageInOrder() {
    for (const list of LISTS) {
      for (const order of ['desc', 'asc'] as const) {
        const expected = await reference(list.table, order);
        expect(expected.length).toBe(total);
        expect(await everyPage(`${list.path}&order=${order}`, list.name, expected.length)).toEqual(expected);
      }
    }
  }

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    const author = (await addUser(runtime.database.db)).id;
    // Each day's posts spread over the whole day, its first and last microsecond included; ids do not follow dates.
    for (const [day, count] of DAYS.entries()) {
      if (count === 0) continue;
      const date = `2024-03-${String(day + 1).padStart(2, '0')}`;
      await runtime.database.query(sql`
        INSERT INTO questions (author_id, title, slug, content, created_at)
        SELECT ${author}, 'Question ' || ${date} || ' ' || i, 'q-' || ${date} || '-' || i, 'Body',
               ${date}::timestamp AT TIME ZONE 'UTC'
                 + CASE i WHEN 1 THEN interval '0' WHEN 2 THEN interval '1 day' - interval '1 microsecond'
                          ELSE ((i * 7919) % 86400) * interval '1 second' END
        FROM generate_series(1, ${count}) i`);
    }
    await runtime.database.query(sql`
      INSERT INTO answers (question_id, author_id, content, created_at)
      SELECT id, author_id, 'Answer', created_at + interval '1 microsecond' * (id % 3) FROM questions`);
    await runtime.database.query(sql`
      INSERT INTO comments (question_id, author_id, content, created_at)
      SELECT id, author_id, 'Comment', created_at FROM questions`);
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('finds the day that holds an offset, in either direction, from the counters alone', async () => {
    const db = runtime.database.db;
    // Newest first: 2024-03-10 (260), 03-09 (650), 03-08 (1) … The 1,000th row is on 03-09, after 260 rows.
    const newest = await dayAnchor(db, 'questions', true, 1000, total);
    expect(newest?.before).toBe(260 + 650 + 1);
    const oldest = await dayAnchor(db, 'questions', false, 2500, total);
    // Oldest first: 900 + 40 + 0 + 1,700 passes 2,500 on 03-04, after 940 rows.
    expect(oldest?.before).toBe(940);
    // Counters that do not add up to the list's total are not used.
    expect(await dayAnchor(db, 'questions', true, 1000, total + 1)).toBeUndefined();
  });

  it('every page by number is the list in order, both directions', async () => {
    await expectEveryPageInOrder();
  });

  it('posts whose dates change move their day counts: the pages stay in order', async () => {
    // Across days, to an empty day, within a day, and to a day no post had.
    await runtime.database.query(sql`
      UPDATE questions SET created_at = created_at - interval '2 days' WHERE id % 5 = 0`);
    await runtime.database.query(sql`
      UPDATE answers SET created_at = '2024-03-03T12:00:00Z' WHERE id % 7 = 0`);
    await runtime.database.query(sql`
      UPDATE comments SET created_at = created_at + interval '1 hour' WHERE id % 4 = 0`);
    await runtime.database.query(sql`
      UPDATE comments SET created_at = '2024-02-01T00:00:00Z' WHERE id % 11 = 0`);
    await expectEveryPageInOrder();
  });

  it('counters that do not add up to the total: the pages are still in order (walked from the ends)', async () => {
    await runtime.database.query(
      sql`UPDATE list_counts SET n = n + 3 WHERE scope IN ('day:2024-03-06:questions', 'day:2024-03-06:comments')`,
    );
    await expectEveryPageInOrder();
  });
});
