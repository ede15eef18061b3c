import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addCategory, addQuestion, addTag, addUser, at } from './fixtures.js';

/**
 * Seek pagination (shared/db/repositories/seek.ts): pages by number, walked from the nearer end of the index, give
 * exactly the list's order; cursors walk the same order, and keep walking it with no duplicate and no gap while rows
 * are inserted; a cursor that this API did not write for this list is a 400.
 */

const SORT_SQL = {
  newest: 'created_at DESC, id DESC',
  votes: 'votes DESC, id DESC',
  views: 'views DESC, id DESC',
  unanswered: 'created_at DESC, id DESC',
} as const;
type Sort = keyof typeof SORT_SQL;

interface Page {
  status: number;
  body: {
    data: {
      questions: { id: number }[];
      pagination: { current_page: number; total_items: number; next_cursor: string | null };
    };
  };
}

describe('seek pagination and cursors', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let authorId: number;
  let tagId: number;
  let categoryId: number;
  let inserted = 0;

  const get = async (url: string): Promise<Page> => {
    const res = await app.inject(url);
    return { status: res.statusCode, body: res.json() };
  };

  /** The list's ids in its order, computed straight from the questions table. */
  async function reference(sort: Sort, filter: { tag?: boolean; category?: boolean }): Promise<number[]> {
    const conditions = [sql`true`];
    if (sort === 'unanswered') conditions.push(sql`answers_count = 0`);
    if (filter.tag)
      conditions.push(sql`id IN (SELECT question_id FROM question_tags WHERE tag_id = ${tagId})`);
    if (filter.category) conditions.push(sql`category_id = ${categoryId}`);
    const found = await runtime.database.query<{ id: number }>(
      sql`SELECT id FROM questions WHERE ${sql.join(conditions, sql` AND `)} ORDER BY ${sql.raw(SORT_SQL[sort])}`,
    );
    return found.map((r) => r.id);
  }

  const query = (sort: Sort, filter: { tag?: boolean; category?: boolean }) =>
    `/api/questions?sort=${sort}&limit=7${filter.tag ? '&tag=lager' : ''}${filter.category ? `&category=${categoryId}` : ''}`;

  async function walkByCursor(url: string, between?: () => Promise<void>): Promise<number[]> {
    const seen: number[] = [];
    let page = await get(url);
    for (let guard = 0; guard < 100; guard++) {
      expect(page.status).toBe(200);
      seen.push(...page.body.data.questions.map((q) => q.id));
      const next = page.body.data.pagination.next_cursor;
      if (next === null) return seen;
      await between?.();
      page = await get(`${url}&cursor=${next}`);
      expect(page.body.data.pagination.current_page).toBe(guard + 2);
    }
    throw new Error('the walk did not end');
  }

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    authorId = (await addUser(db)).id;
    const other = await addUser(db);
    categoryId = (await addCategory(db, 'Lagers')).id;
    const otherCategory = (await addCategory(db, 'Ales')).id;
    tagId = (await addTag(db, 'lager')).id;
    const pils = (await addTag(db, 'pils')).id;
    // 45 questions whose keys repeat (so the id decides ties) and whose tags and categories vary.
    for (let i = 0; i < 45; i++) {
      const q = await addQuestion(db, {
        authorId,
        createdAt: at(Math.floor(i / 4)),
        votes: (i * 7) % 6,
        views: (i * 5) % 9,
        categoryId: i % 3 === 0 ? null : i % 2 === 0 ? categoryId : otherCategory,
        tagIds: [i % 4 !== 3 ? tagId : null, i % 2 === 0 ? pils : null].filter((t) => t !== null),
      });
      if (i % 5 === 1 || i % 5 === 2) await addAnswer(db, { questionId: q.id, authorId: other.id });
    }
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it.each(
    (['newest', 'votes', 'views', 'unanswered'] as const).flatMap((sort) =>
      [{}, { tag: true }, { category: true }, { tag: true, category: true }].map(
        (filter) => [sort, filter] as const,
      ),
    ),
  )(
    'sort=%s %j: every page by number (either end) and the cursor walk give the list in order',
    async (sort, filter) => {
      const expected = await reference(sort, filter);
      expect(expected.length).toBeGreaterThan(7);
      const byPage: number[] = [];
      for (let page = 1; page <= Math.ceil(expected.length / 7); page++) {
        const { body } = await get(`${query(sort, filter)}&page=${page}`);
        expect(body.data.pagination.total_items).toBe(expected.length);
        expect(body.data.pagination.next_cursor === null).toBe(page === Math.ceil(expected.length / 7));
        byPage.push(...body.data.questions.map((q) => q.id));
      }
      expect(byPage).toEqual(expected);
      expect(await walkByCursor(query(sort, filter))).toEqual(expected);
    },
  );

  it('a page number past the middle gives the same rows as the cursor walk reaching it', async () => {
    const expected = await reference('votes', {});
    const last = Math.ceil(expected.length / 7);
    const { body } = await get(`/api/questions?sort=votes&limit=7&page=${last - 1}`);
    expect(body.data.questions.map((q) => q.id)).toEqual(expected.slice((last - 2) * 7, (last - 1) * 7));
  });

  it.each([
    ['newest', {}],
    ['votes', {}],
    ['views', { tag: true }],
    ['newest', { tag: true, category: true }],
  ] as const)(
    'walking sort=%s %j with cursors while rows are inserted: no duplicate, no gap',
    async (sort, filter) => {
      const before = await reference(sort, filter);
      const db = runtime.database.db;
      // Between pages, questions land everywhere in the order: newest and oldest, most and least voted.
      const insertSome = async () => {
        for (const spread of [-1, 0.5, 2]) {
          inserted += 1;
          await addQuestion(db, {
            authorId,
            createdAt: at(Math.round(spread * 12) + (inserted % 3)),
            votes: Math.round(spread * 5),
            views: Math.round(spread * 9),
            categoryId,
            tagIds: [tagId],
          });
        }
      };
      const walked = await walkByCursor(query(sort, filter), insertSome);
      expect(new Set(walked).size).toBe(walked.length);
      // Every row that was there before and stayed is seen, in the list's order.
      const original = new Set(before);
      expect(walked.filter((id) => original.has(id))).toEqual(before);
      // And the whole walk is in the list's order as it stands now.
      const now = await reference(sort, filter);
      const position = new Map(now.map((id, i) => [id, i]));
      const positions = walked.map((id) => position.get(id)!);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    },
  );

  it.each([
    ['users', ['reputation', 'newest', 'name']],
    ['tags', ['popular', 'name', 'newest']],
  ] as const)('/api/%s walks by cursor as by page, for every sort', async (resource, sorts) => {
    const db = runtime.database.db;
    for (let i = 0; i < 9; i++) await addUser(db, { reputation: i % 4, displayName: `Name ${i % 3}` });
    for (let i = 0; i < 9; i++) await addTag(db, `tag-${resource}-${i}`, at(i % 2));
    for (const sort of sorts) {
      const byCursor: number[] = [];
      const pages: number[] = [];
      const first = (await app.inject(`/api/${resource}?sort=${sort}&limit=3`)).json().data;
      const count = first.pagination.total_items as number;
      for (let page = 1; page <= Math.ceil(count / 3); page++) {
        const data = (await app.inject(`/api/${resource}?sort=${sort}&limit=3&page=${page}`)).json().data;
        pages.push(...(data[resource] as { id: number }[]).map((r) => r.id));
      }
      let data = first;
      for (let guard = 0; guard < 100; guard++) {
        byCursor.push(...(data[resource] as { id: number }[]).map((r) => r.id));
        if (data.pagination.next_cursor === null) break;
        data = (
          await app.inject(`/api/${resource}?sort=${sort}&limit=3&cursor=${data.pagination.next_cursor}`)
        ).json().data;
      }
      expect(pages.length).toBe(count);
      expect(byCursor).toEqual(pages);
    }
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['not base64 JSON', Buffer.from('{"v":1').toString('base64url')],
    [
      'a forged key',
      Buffer.from(
        JSON.stringify({ v: 1, l: '["questions","newest",null,null]', k: ['x', 'y'], p: 2 }),
      ).toString('base64url'),
    ],
    [
      'a key past int4',
      Buffer.from(
        JSON.stringify({ v: 1, l: '["questions","votes",null,null]', k: [1, 2 ** 40], p: 2 }),
      ).toString('base64url'),
    ],
    ['characters outside base64url', 'abc%2Fdef'],
    ['an over-long cursor', 'a'.repeat(4097)],
  ])('refuses %s with a 400 error body', async (_label, cursor) => {
    for (const sort of ['newest', 'votes']) {
      const res = await app.inject(`/api/questions?sort=${sort}&cursor=${cursor}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 400, message: expect.any(String) });
    }
  });

  it('refuses the cursor of another list (another sort or filter)', async () => {
    const { body } = await get('/api/questions?sort=votes&limit=3');
    const cursor = body.data.pagination.next_cursor!;
    expect((await get(`/api/questions?sort=votes&limit=3&cursor=${cursor}`)).status).toBe(200);
    for (const url of [
      '/api/questions?sort=newest',
      '/api/questions?sort=votes&tag=lager',
      '/api/users?sort=reputation',
    ]) {
      const res = await app.inject(`${url}&cursor=${cursor}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/cursor/);
    }
  });
});
