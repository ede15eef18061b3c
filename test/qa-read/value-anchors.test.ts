import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { levelRange, valueAnchor, type ValueCounted } from '../../shared/db/repositories/seek.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addUser } from './fixtures.js';

/**
 * Deep page numbers of the lists sorted by a number (questions by votes and by views, all of them, a category's or a
 * tag's; answers, comments and users) start their walk at the value bucket, or the block of ids within one value, that holds their
 * offset (seek.ts, valueAnchor; counts of migrations 0028, 0029, 0033 and 0036, names by bucket). Every page must still be exactly the list's order: with a one-value bucket
 * spanning several blocks of ids, negative values, buckets of several values, values at the ends of int4, after rows
 * move between buckets (one statement or many, concurrently), and when the counts do not add up.
 */

const PER_PAGE = 100;
/** Rows a page number must skip before the counts are used (seek.ts, ANCHOR_MIN_SKIP). */
const ANCHORED_SKIP = 2000;
/** More than two blocks of 4,096 ids, so that the one-value buckets span several blocks. */
const QUESTIONS = 9000;
const USERS = 5000;

/** Two categories: most questions in the first, a few in the second, some in none. */
const [CATEGORY_A, CATEGORY_B] = [901, 902];
/** Two tags (migration 0033): half the questions in the first, a fifth in the second. */
const [TAG_A, TAG_B] = [801, 802];
const tagged = (tag: number) =>
  `(SELECT q.* FROM questions q JOIN question_tags qt ON qt.question_id = q.id WHERE qt.tag_id = ${tag}) t`;

/** Each list: its value counts, its API path and the rows it lists (`rows`: a FROM item with `id` and `value`). */
const LISTS: { list: ValueCounted; key: string; path: string; rows: string; value: string }[] = [
  ...(['votes', 'views'] as const).flatMap((sort) => [
    {
      list: `questions:${sort}` as const,
      key: 'questions',
      path: `/api/questions?sort=${sort}`,
      rows: 'questions',
      value: sort,
    },
    ...[CATEGORY_A, CATEGORY_B].map((category) => ({
      list: `category:${category}:${sort}` as const,
      key: 'questions',
      path: `/api/questions?sort=${sort}&category=${category}`,
      rows: `(SELECT * FROM questions WHERE category_id = ${category}) c`,
      value: sort,
    })),
    ...[TAG_A, TAG_B].map((tag) => ({
      list: `tag:${tag}:${sort}` as const,
      key: 'questions',
      path: `/api/questions?sort=${sort}&tag=t${tag}`,
      rows: tagged(tag),
      value: sort,
    })),
  ]),
  { list: 'answers:votes', key: 'answers', path: '/api/answers?sort=votes', rows: 'answers', value: 'votes' },
  {
    list: 'comments:votes',
    key: 'comments',
    path: '/api/comments?sort=votes',
    rows: 'comments',
    value: 'votes',
  },
  {
    list: 'users:reputation',
    key: 'users',
    path: '/api/users?sort=reputation',
    rows: 'users',
    value: 'reputation',
  },
  // Counted per bucket of names (migration 0036): the list's order is the collation's.
  {
    list: 'users:name',
    key: 'users',
    path: '/api/users?sort=name',
    rows: 'users',
    value: 'lower(display_name) COLLATE agora_names',
  },
];

/** Rows per INSERT of the fixtures: one statement of thousands of rows writes the same list counters once per row
 * (deferred triggers of migration 0009) and grows quadratically; chunks of 500 keep the setup short. */
async function inChunks(total: number, write: (lo: number, hi: number) => Promise<unknown>): Promise<void> {
  for (let lo = 1; lo <= total; lo += 500) await write(lo, Math.min(total, lo + 499));
}

describe('deep pages by a number start at the value counts', { timeout: 180_000 }, () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  const query = <T extends Record<string, unknown>>(statement: ReturnType<typeof sql>) =>
    runtime.database.query<T>(statement);

  async function reference(rows: string, value: string, direction: 'asc' | 'desc'): Promise<number[]> {
    const d = sql.raw(direction);
    const found = await query<{ id: number }>(
      sql`SELECT id FROM ${sql.raw(rows)} ORDER BY ${sql.raw(value)} ${d}, id ${d}`,
    );
    return found.map((r) => r.id);
  }

  /** Every page of the list in both directions, against the table's own order. */
  async function expectEveryPageInOrder() {
    for (const { key, path, rows, value } of LISTS) {
      for (const direction of ['desc', 'asc'] as const) {
        const expected = await reference(rows, value, direction);
        const last = Math.ceil(expected.length / PER_PAGE);
        for (let page = 1; page <= last; page++) {
          const res = await app.inject(`${path}&order=${direction}&limit=${PER_PAGE}&page=${page}`);
          expect(res.statusCode).toBe(200);
          const data = res.json().data;
          expect(data.pagination.total_items).toBe(expected.length);
          const ids = (data[key] as { id: number }[]).map((r) => r.id);
          expect(ids, `${path} ${direction} page ${page}`).toEqual(
            expected.slice((page - 1) * PER_PAGE, page * PER_PAGE),
          );
        }
      }
    }
  }

  /** The maintained counts, then what agora_recount_values() computes from the tables, as sorted rows. */
  async function maintainedAndRecounted() {
    const read = async () =>
      JSON.stringify(
        await query(
          sql`SELECT list, level, bucket, block, n::int FROM value_counts WHERE n <> 0 ORDER BY 1, 2, 3, 4`,
        ),
      );
    const maintained = await read();
    await query(sql`SELECT agora_recount_values()`);
    return { maintained, recounted: await read() };
  }

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    const author = (await addUser(runtime.database.db)).id;
    await query(sql`INSERT INTO categories (id, name, slug, description, icon)
                     VALUES (${CATEGORY_A}, 'A', 'a', 'A', 'fa-a'), (${CATEGORY_B}, 'B', 'b', 'B', 'fa-b')`);
    // Written with the triggers on: the counts below are the statement triggers' own.
    await inChunks(QUESTIONS, (lo, hi) =>
      query(sql`
      INSERT INTO questions (author_id, title, slug, content, category_id, votes, views)
      SELECT ${author}, 'Question ' || i, 'q-' || i, 'Body',
             CASE i % 8 WHEN 0 THEN NULL WHEN 4 THEN ${CATEGORY_B}::int ELSE ${CATEGORY_A}::int END,
             CASE WHEN i % 3 = 0 THEN 0
                  WHEN i % 7 = 0 THEN -(i % 5) - 1
                  WHEN i % 11 = 0 THEN 1024 + i % 3
                  WHEN i % 13 = 0 THEN 70000 + i % 50
                  WHEN i = 1 THEN 2147483647
                  WHEN i = 2 THEN -2147483648
                  ELSE i % 40 END,
             CASE WHEN i % 17 = 0 THEN 0 ELSE (i * 7919) % 3000 END
      FROM generate_series(${lo}::int, ${hi}::int) i`),
    );
    await query(
      sql`INSERT INTO tags (id, name, slug) VALUES (${TAG_A}, 't801', 't801'), (${TAG_B}, 't802', 't802')`,
    );
    await inChunks(QUESTIONS, (lo, hi) =>
      query(sql`
      INSERT INTO question_tags (question_id, tag_id)
      SELECT id, ${TAG_A}::int FROM questions WHERE id % 2 = 0 AND id BETWEEN ${lo}::int AND ${hi}::int
      UNION ALL SELECT id, ${TAG_B}::int FROM questions WHERE id % 5 = 0 AND id BETWEEN ${lo}::int AND ${hi}::int`),
    );
    await inChunks(6000, (lo, hi) =>
      query(sql`
      INSERT INTO answers (question_id, author_id, content, votes)
      SELECT 1 + i % ${QUESTIONS}, ${author}, 'Answer ' || i, CASE WHEN i % 2 = 0 THEN 0 ELSE (i * 31) % 97 - 5 END
      FROM generate_series(${lo}::int, ${hi}::int) i`),
    );
    await inChunks(5000, (lo, hi) =>
      query(sql`
      INSERT INTO comments (question_id, author_id, content, votes)
      SELECT 1 + i % ${QUESTIONS}, ${author}, 'Comment ' || i, CASE WHEN i % 3 = 0 THEN 0 ELSE i % 13 END
      FROM generate_series(${lo}::int, ${hi}::int) i`),
    );
    await inChunks(USERS, (lo, hi) =>
      query(sql`
      INSERT INTO users (username, display_name, reputation)
      SELECT 'rep' || i,
             -- Names over many buckets, and at their edges: ties, case, accents, before 'aaa', after Latin.
             CASE WHEN i % 50 = 0 THEN 'Same Name'
                  WHEN i % 37 = 0 THEN '1337 ' || i
                  WHEN i % 41 = 0 THEN 'Иван ' || i
                  WHEN i % 43 = 0 THEN 'Élodie ' || i
                  WHEN i % 47 = 0 THEN 'zzz' || i
                  WHEN i % 53 = 0 THEN 'a'
                  WHEN i % 59 = 0 THEN 'AAA'
                  ELSE initcap(chr(97 + i % 26) || chr(97 + (i / 26) % 26) || chr(97 + (i * 7) % 26)) || ' ' || i
             END,
             CASE WHEN i % 4 = 0 THEN 1 ELSE (i * 131) % 40000 + 1 END
      FROM generate_series(${lo}::int, ${hi}::int) i`),
    );
  }, 300_000);

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it("each level's bucket holds exactly the values levelRange names", async () => {
    const values = [
      -2147483648, -1048577, -1048576, -70049, -1025, -1024, -1, 0, 1, 1023, 1024, 1048575, 1048576,
    ];
    const probes = [...values, 2147483647, 123457];
    const found = await query<{ v: number; level: number; bucket: number }>(
      sql`SELECT v, k.level, k.bucket FROM unnest(${`{${probes.join(',')}}`}::int[]) v,
          agora_value_count_keys(v, 1) k WHERE k.level < 3`,
    );
    expect(found).toHaveLength(probes.length * 3);
    for (const { v, level, bucket } of found) {
      const { lo, hi } = levelRange(level as 0 | 1 | 2, bucket);
      expect(v, `value ${v} at level ${level}`).toBeGreaterThanOrEqual(lo);
      expect(v).toBeLessThanOrEqual(hi);
      // The values just outside the range belong to the neighbouring buckets.
      for (const outside of [lo - 1, hi + 1].filter((x) => x >= -2147483648 && x <= 2147483647)) {
        const [other] = await query<{ bucket: number }>(
          sql`SELECT bucket FROM agora_value_count_keys(${outside}::int, 1) WHERE level = ${level}`,
        );
        expect(other!.bucket).not.toBe(bucket);
      }
    }
  });

  /**
   * At skips over the whole list, in both directions: the anchor's count of rows before it is the table's own, and
   * never past the skip. Returns how many anchors were found.
   */
  async function expectAnchorsExact(list: ValueCounted, rows: string, value: string): Promise<number> {
    const [{ total }] = (await query<{ total: number }>(
      sql`SELECT count(*)::int AS total FROM ${sql.raw(rows)}`,
    )) as [{ total: number }];
    let found = 0;
    for (const descending of [true, false]) {
      // Every 137th row from the 2,000th, and the last (the ends of int4's range are in the lists).
      const skips = [
        ...Array.from(
          { length: Math.ceil((total - ANCHORED_SKIP) / 137) },
          (_, k) => ANCHORED_SKIP + k * 137,
        ),
        total - 1,
      ];
      for (const skip of skips) {
        const anchor = await valueAnchor(runtime.database.db, list, descending, skip, total);
        if (!anchor) continue;
        found++;
        const bound = anchor.bound(sql.raw(value), sql.raw('id'));
        const [{ before }] = (await query<{ before: number }>(
          sql`SELECT count(*)::int AS before FROM ${sql.raw(rows)} WHERE NOT (${bound})`,
        )) as [{ before: number }];
        expect(before, `${list} ${descending ? 'desc' : 'asc'} skip ${skip}`).toBe(anchor.before);
        expect(anchor.before).toBeLessThanOrEqual(skip);
      }
    }
    return found;
  }

  it('the anchor names exactly the rows before it, at every depth and in either direction', async () => {
    for (const { list, rows, value } of LISTS) {
      expect(await expectAnchorsExact(list, rows, value), list).toBeGreaterThan(
        list.includes(`${CATEGORY_B}`) || list.includes(`${TAG_B}`) ? 0 : 20,
      );
      // Counts that do not add up to the list's total are not used.
      expect(await valueAnchor(runtime.database.db, list, true, 2500, 1_000_000)).toBeUndefined();
    }
    // The one-value bucket of 0 votes (3,000 questions over three blocks of ids) anchors at a block inside it.
    const [{ zeroFrom }] = (await query<{ zeroFrom: number }>(
      sql`SELECT count(*)::int AS "zeroFrom" FROM questions WHERE votes > 0`,
    )) as [{ zeroFrom: number }];
    const inZero = await valueAnchor(
      runtime.database.db,
      'questions:votes',
      true,
      zeroFrom + 2500,
      QUESTIONS,
    );
    expect(inZero!.before).toBeGreaterThan(zeroFrom);
  });

  it("values over several spans of ids; the previous release's descent (blocks at level 4) lands where the spans' one does", async () => {
    // Questions in two more spans of 65,536 ids, in the crowded value 0 and a few others, so that a value's rows
    // fall into several spans.
    const author = (await addUser(runtime.database.db)).id;
    await query(sql`INSERT INTO questions (id, author_id, title, slug, content, votes, views)
                     SELECT i, ${author}, 'Far ' || i, 'far-' || i, 'Body', CASE WHEN i % 4 = 0 THEN i % 7 ELSE 0 END, i % 900
                     FROM (SELECT 70000 + g AS i FROM generate_series(1, 1200) g
                           UNION ALL SELECT 140000 + g FROM generate_series(1, 1200) g) ids`);
    expect(await expectAnchorsExact('questions:votes', 'questions', 'votes')).toBeGreaterThan(20);
    expect(await expectAnchorsExact('questions:views', 'questions', 'views')).toBeGreaterThan(20);
    // During a rolling update the old code reads the same counts: its deepest row must be the new descent's block.
    type Row = { level: number; bucket: number; block: number; before: string };
    let compared = 0;
    for (const list of ['questions:votes', 'answers:votes', 'users:reputation'] as const) {
      const [{ total }] = (await query<{ total: string }>(
        sql`SELECT n::text AS total FROM value_counts WHERE list = ${list} AND level = 0 AND bucket = 0`,
      )) as [{ total: string }];
      for (const descending of [true, false])
        for (let skip = ANCHORED_SKIP; skip < Number(total); skip += 211) {
          const args = sql`${list}::text, ${descending}::boolean, ${skip}::bigint, ${total}::bigint`;
          const old = (await query<Row>(sql`SELECT * FROM agora_value_anchor(${args})`)).at(-1);
          const spans = (await query<Row>(sql`SELECT * FROM agora_value_anchor_spans(${args})`)).at(-1);
          expect(spans, `${list} ${skip}`).toEqual(old);
          if (old?.level === 4) compared++;
        }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('the pages by number are the list in order, both directions', async () => {
    await expectEveryPageInOrder();
  });

  it('bounds taken from the names by agora_recount (migration 0038): the anchors stay exact and land within a bucket of them', async () => {
    const NAME = 'lower(display_name) COLLATE agora_names';
    // A thousand names in one three-letter bucket ('olg'), which its fixed bound alone leaves whole.
    await query(sql`INSERT INTO users (username, display_name, reputation)
                     SELECT 'olga' || i, 'Olga ' || i, 1 FROM generate_series(1, 1000) i`);
    /** How far each anchor of users by name stops before its skip, ascending and descending. */
    const gaps = async () => {
      const [{ total }] = (await query<{ total: number }>(sql`SELECT count(*)::int AS total FROM users`)) as [
        { total: number },
      ];
      const found: number[] = [];
      for (const descending of [false, true])
        for (let skip = ANCHORED_SKIP; skip < total; skip += 97) {
          const anchor = await valueAnchor(runtime.database.db, 'users:name', descending, skip, total);
          if (anchor) found.push(skip - anchor.before);
        }
      return found;
    };
    const fixedOnly = await gaps();
    await query(sql`SELECT agora_recount()`);
    const [bounds] = await query<{ n: number; first: string; last: number }>(
      sql`SELECT count(*)::int AS n, (SELECT bound FROM user_name_bounds ORDER BY bucket LIMIT 1) AS first, max(bucket) AS last
          FROM user_name_bounds`,
    );
    expect(bounds).toMatchObject({ first: '', last: 2 ** 24 - 1 });
    // '', the 17,576 three-letter strings, and about one name in 64 (fewer where they coincide).
    expect(bounds!.n).toBeGreaterThan(1 + 26 ** 3 + 40);
    expect(await expectAnchorsExact('users:name', 'users', NAME)).toBeGreaterThan(20);
    const fromNames = await gaps();
    expect(fromNames.length).toBe(fixedOnly.length);
    // A bucket now holds at most 64 names past its bound, or a run of equal names (the largest such run).
    const [{ run }] = (await query<{ run: number }>(
      sql`SELECT max(n)::int AS run FROM (SELECT count(*) AS n FROM users GROUP BY ${sql.raw(NAME)}) g`,
    )) as [{ run: number }];
    expect(Math.max(...fixedOnly)).toBeGreaterThan(64 + run);
    expect(Math.max(...fromNames)).toBeLessThanOrEqual(64 + run);
    // The next test walks every page, and compares the counts kept by the triggers with a recount, on these bounds.
  });

  it('rows that move between buckets move their counts: the pages stay in order, the counts match a recount', async () => {
    // Many rows in one statement (a view flush's shape), one row at a time, into and out of the one-value buckets,
    // new rows and deleted ones.
    await query(sql`UPDATE questions SET views = views + 1500 WHERE id % 10 = 3`);
    await query(sql`UPDATE questions SET votes = 0 WHERE id % 9 = 1`);
    // Between categories, out of every category and into one, with a vote at the same time.
    await query(sql`UPDATE questions SET category_id = ${CATEGORY_B}::int WHERE id % 11 = 5`);
    await query(sql`UPDATE questions SET category_id = NULL, votes = votes + 2 WHERE id % 13 = 6`);
    await query(
      sql`UPDATE questions SET category_id = ${CATEGORY_A}::int WHERE category_id IS NULL AND id % 3 = 0`,
    );
    for (const id of [5, 6, 4100, 8191, 8192]) {
      await query(sql`UPDATE questions SET votes = votes + 1, views = 0 WHERE id = ${id}`);
    }
    await query(sql`UPDATE users SET reputation = reputation * 3 WHERE id % 6 = 0`);
    // Renamed into other buckets of names, and only in case (the same bucket).
    await query(sql`UPDATE users SET display_name = 'Renamed ' || id WHERE id % 9 = 4`);
    await query(sql`UPDATE users SET display_name = upper(display_name) WHERE id % 11 = 3`);
    await query(sql`UPDATE answers SET votes = votes + 3 WHERE id % 5 = 1`);
    await query(sql`UPDATE comments SET votes = 0 WHERE id % 4 = 1`);
    await query(sql`DELETE FROM comments WHERE id % 30 = 2`);
    // A question's tags edited: some taken off, some added (question_tags' own triggers).
    await query(sql`DELETE FROM question_tags WHERE tag_id = ${TAG_A} AND question_id % 14 = 4`);
    await query(sql`INSERT INTO question_tags (question_id, tag_id)
                     SELECT id, ${TAG_B}::int FROM questions WHERE id % 10 = 1`);
    await query(sql`DELETE FROM questions WHERE id % 50 = 7`);
    await query(sql`DELETE FROM questions WHERE id % 50 = 10`);
    await query(sql`DELETE FROM users WHERE id % 70 = 9`);
    await query(sql`
      INSERT INTO questions (author_id, title, slug, content, votes, views)
      SELECT author_id, 'More ' || id, 'more-' || id, 'Body', 0, 1024 FROM questions WHERE id % 25 = 2`);
    const { maintained, recounted } = await maintainedAndRecounted();
    expect(maintained).toEqual(recounted);
    await expectEveryPageInOrder();
  });

  it('concurrent votes, reputation changes and view flushes keep the counts exact, without deadlocks', async () => {
    const db = runtime.database.db;
    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let k = 0; k < 30; k++) {
          const a = ((w * 131 + k * 17) % QUESTIONS) + 1;
          const users = [((w * 31 + k) % USERS) + 2, ((w * 7 + k * 13) % USERS) + 2];
          await db.transaction(async (tx) => {
            // A vote's shape: the question's score, then its author's and the voter's reputation in one statement.
            await tx.execute(
              sql`UPDATE questions SET votes = votes + ${k % 2 === 0 ? 1 : -1} WHERE id = ${a}`,
            );
            await tx.execute(sql`SELECT id FROM users WHERE id = ANY(${`{${users.join(',')}}`}::int[])
                                 ORDER BY id FOR NO KEY UPDATE`);
            await tx.execute(sql`UPDATE users u SET reputation = u.reputation + d.delta
                                 FROM unnest(${`{${users.join(',')}}`}::int[], '{10,-2}'::int[]) AS d(id, delta)
                                 WHERE u.id = d.id`);
          });
          // A view flush's shape: rows locked in id order, then one UPDATE of many.
          const ids = Array.from({ length: 20 }, (_, j) => ((a + j * 97) % QUESTIONS) + 1).sort(
            (x, y) => x - y,
          );
          await db.transaction(async (tx) => {
            await tx.execute(sql`SELECT id FROM questions WHERE id = ANY(${`{${ids.join(',')}}`}::int[])
                                 ORDER BY id FOR UPDATE`);
            await tx.execute(sql`UPDATE questions SET views = views + ${1 + (k % 5)}
                                 WHERE id = ANY(${`{${ids.join(',')}}`}::int[])`);
          });
        }
      })(),
    );
    const outcomes = await Promise.allSettled(writers);
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    const { maintained, recounted } = await maintainedAndRecounted();
    expect(maintained).toEqual(recounted);
  });

  it('counts that do not add up to the total: the pages are still in order (walked from the ends)', async () => {
    // A top level that does not add up to the total (votes), blocks that do not add up to their span of ids and a
    // span that does not add up to its value (views), a bucket of 256 values that does not add up to its level-1
    // bucket (reputations from 19,456). Each must change counts, or the case it stands for goes untested.
    const changedRows = async (update: ReturnType<typeof sql>) => {
      const [row] = await query<{ n: number }>(
        sql`WITH changed AS (${update} RETURNING 1) SELECT count(*)::int AS n FROM changed`,
      );
      return row!.n;
    };
    expect(
      await changedRows(
        sql`UPDATE value_counts SET n = n + 3 WHERE list = 'questions:votes' AND level = 0 AND bucket = 0`,
      ),
    ).toBe(1);
    expect(
      await changedRows(
        sql`UPDATE value_counts SET n = n + 1 WHERE list = 'questions:views' AND level = 4 AND block = 1`,
      ),
    ).toBeGreaterThan(0);
    expect(
      await changedRows(sql`UPDATE value_counts SET n = n + 1 WHERE list = 'questions:views' AND level = 5 AND bucket = (
                              SELECT bucket FROM value_counts WHERE list = 'questions:views' AND level = 3
                              ORDER BY n DESC, bucket LIMIT 1)`),
    ).toBe(1);
    expect(
      await changedRows(sql`UPDATE value_counts SET n = n + 2 WHERE list = 'users:reputation' AND level = 2 AND bucket IN (
                              SELECT bucket FROM value_counts WHERE list = 'users:reputation' AND level = 2 AND n > 0
                              AND bucket >= (19 * 1024) >> 8 ORDER BY bucket LIMIT 1)`),
    ).toBe(1);
    expect(await valueAnchor(runtime.database.db, 'questions:votes', true, 2500, QUESTIONS)).toBeUndefined();
    // The anchors that remain stop above the counts that do not add up, and still count exactly.
    expect(await expectAnchorsExact('questions:views', 'questions', 'views')).toBeGreaterThan(20);
    expect(await expectAnchorsExact('users:reputation', 'users', 'reputation')).toBeGreaterThan(20);
    await expectEveryPageInOrder();
  });
});
