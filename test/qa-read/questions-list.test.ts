import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addCategory, addQuestion, addTag, addUser, at } from './fixtures.js';

interface Fixture {
  id: number;
  created: number;
  votes: number;
  views: number;
  answers: number;
  tags: string[];
  category: number | null;
}

interface Listed {
  id: number;
}

describe('GET /api/questions', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const fixtures: Fixture[] = [];
  let categoryA: number;
  let categoryB: number;

  const get = async (query: string) => {
    const res = await app.inject(`/api/questions${query}`);
    return { status: res.statusCode, body: res.json() };
  };
  const ids = (body: { data: { questions: Listed[] } }) => body.data.questions.map((q) => q.id);
  const byNewest = (a: Fixture, b: Fixture) => b.created - a.created || b.id - a.id;
  const order = (list: Fixture[], compare: (a: Fixture, b: Fixture) => number) =>
    [...list].sort(compare).map((f) => f.id);

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    const [alice, bob] = [
      await addUser(db, { username: 'alice', avatar: 'https://example.test/a.png' }),
      await addUser(db),
    ];
    categoryA = (await addCategory(db, 'Brewing')).id;
    categoryB = (await addCategory(db, 'Styles')).id;
    const ipa = await addTag(db, 'ipa');
    const stout = await addTag(db, 'stout');
    // 25 questions; created_at, votes and views repeat on purpose so that the id tie-breaker decides.
    for (let i = 0; i < 25; i++) {
      const tagList = [i % 2 === 0 ? ipa : null, i % 3 === 0 ? stout : null].filter((t) => t !== null);
      const category = i % 4 === 0 ? null : i % 2 === 0 ? categoryA : categoryB;
      const fixture = {
        created: Math.floor(i / 3),
        votes: (i * 7) % 5,
        views: (i * 11) % 4,
        answers: i % 5 === 0 ? 0 : i % 3,
        tags: tagList.map((t) => t.name),
        category,
      };
      const q = await addQuestion(db, {
        authorId: (i % 2 === 0 ? alice : bob).id,
        title: `Question ${i}`,
        createdAt: at(fixture.created),
        votes: fixture.votes,
        views: fixture.views,
        categoryId: category,
        tagIds: tagList.map((t) => t.id),
      });
      for (let a = 0; a < fixture.answers; a++) await addAnswer(db, { questionId: q.id, authorId: bob.id });
      fixtures.push({ id: q.id, ...fixture });
    }
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('defaults to newest first, 20 per page, with exact pagination', async () => {
    const { status, body } = await get('');
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(ids(body)).toEqual(order(fixtures, byNewest).slice(0, 20));
    expect(body.data.pagination).toEqual({
      current_page: 1,
      total_pages: 2,
      total_items: 25,
      per_page: 20,
      has_more: true,
      next_cursor: expect.any(String),
    });
  });

  it('renders the Question shape of the spec', async () => {
    const { body } = await get('?sort=newest&limit=100');
    const first = fixtures[0]!;
    const q = body.data.questions.find((x: Listed) => x.id === first.id);
    expect(q).toEqual({
      id: first.id,
      title: 'Question 0',
      slug: expect.any(String),
      content: expect.any(String),
      votes: first.votes,
      views: first.views,
      answers_count: 0,
      has_accepted: false,
      author: { id: expect.any(Number), username: 'alice', avatar: 'https://example.test/a.png' },
      tags: ['ipa', 'stout'],
      created_at: '2024-01-01T00:00:00.000Z',
    });
  });

  it.each([
    ['newest', byNewest],
    ['votes', (a: Fixture, b: Fixture) => b.votes - a.votes || b.id - a.id],
    ['views', (a: Fixture, b: Fixture) => b.views - a.views || b.id - a.id],
  ] as const)('sort=%s orders by its key, then id descending', async (sort, compare) => {
    const { body } = await get(`?sort=${sort}&limit=100`);
    expect(ids(body)).toEqual(order(fixtures, compare));
    expect(body.data.pagination.total_items).toBe(25);
  });

  it('sort=unanswered lists only questions without answers, newest first, with their total', async () => {
    const { body } = await get('?sort=unanswered&limit=100');
    const expected = order(
      fixtures.filter((f) => f.answers === 0),
      byNewest,
    );
    expect(expected.length).toBeGreaterThan(3);
    expect(ids(body)).toEqual(expected);
    expect(body.data.questions.every((q: { answers_count: number }) => q.answers_count === 0)).toBe(true);
    expect(body.data.pagination.total_items).toBe(expected.length);
  });

  it('walks every page without overlap or gap; total_pages = ceil(total / per_page)', async () => {
    for (const [sort, compare] of [
      ['newest', byNewest],
      ['votes', (a: Fixture, b: Fixture) => b.votes - a.votes || b.id - a.id],
    ] as const) {
      const seen: number[] = [];
      for (let page = 1; page <= 4; page++) {
        const { body } = await get(`?sort=${sort}&limit=7&page=${page}`);
        expect(body.data.pagination).toEqual({
          current_page: page,
          total_pages: 4,
          total_items: 25,
          per_page: 7,
          has_more: page < 4,
          next_cursor: page < 4 ? expect.any(String) : null,
        });
        expect(body.data.questions).toHaveLength(page < 4 ? 7 : 4);
        seen.push(...ids(body));
      }
      expect(new Set(seen).size).toBe(25);
      expect(seen).toEqual(order(fixtures, compare));
    }
  });

  it('answers a page past the end with an empty list and the real pagination', async () => {
    const { status, body } = await get('?page=9&limit=10');
    expect(status).toBe(200);
    expect(body.data).toEqual({
      questions: [],
      pagination: {
        current_page: 9,
        total_pages: 3,
        total_items: 25,
        per_page: 10,
        has_more: false,
        next_cursor: null,
      },
    });
  });

  it('accepts limit 1 and 100', async () => {
    expect((await get('?limit=1')).body.data.questions).toHaveLength(1);
    expect((await get('?limit=1')).body.data.pagination.total_pages).toBe(25);
    expect((await get('?limit=100')).body.data.questions).toHaveLength(25);
  });

  it('filters by tag slug (total from the tag counter)', async () => {
    const { body } = await get('?tag=stout&limit=100');
    const expected = order(
      fixtures.filter((f) => f.tags.includes('stout')),
      byNewest,
    );
    expect(ids(body)).toEqual(expected);
    expect(body.data.pagination.total_items).toBe(expected.length);
    expect(body.data.questions.every((q: { tags: string[] }) => q.tags.includes('stout'))).toBe(true);
  });

  it('filters by category id (total from the category counter)', async () => {
    const { body } = await get(`?category=${categoryB}&limit=5&sort=votes`);
    const expected = order(
      fixtures.filter((f) => f.category === categoryB),
      (a, b) => b.votes - a.votes || b.id - a.id,
    );
    expect(ids(body)).toEqual(expected.slice(0, 5));
    expect(body.data.pagination).toEqual({
      current_page: 1,
      total_pages: Math.ceil(expected.length / 5),
      total_items: expected.length,
      per_page: 5,
      has_more: expected.length > 5,
      next_cursor: expected.length > 5 ? expect.any(String) : null,
    });
  });

  it('combines tag, category and sort=unanswered, counting the combination exactly', async () => {
    const match = (f: Fixture) => f.tags.includes('ipa') && f.category === categoryA;
    const both = await get(`?tag=ipa&category=${categoryA}&limit=100`);
    expect(ids(both.body)).toEqual(order(fixtures.filter(match), byNewest));
    expect(both.body.data.pagination.total_items).toBe(fixtures.filter(match).length);

    const unanswered = (f: Fixture) => f.tags.includes('ipa') && f.answers === 0;
    const tagged = await get('?tag=ipa&sort=unanswered&limit=100');
    expect(ids(tagged.body)).toEqual(order(fixtures.filter(unanswered), byNewest));
    expect(tagged.body.data.pagination.total_items).toBe(fixtures.filter(unanswered).length);

    const inCategory = (f: Fixture) => f.category === categoryA && f.answers === 0;
    const cat = await get(`?category=${categoryA}&sort=unanswered`);
    expect(ids(cat.body)).toEqual(order(fixtures.filter(inCategory), byNewest));
    expect(cat.body.data.pagination.total_items).toBe(fixtures.filter(inCategory).length);
  });

  it('answers an empty page for an unknown tag or category', async () => {
    const empty = {
      questions: [],
      pagination: {
        current_page: 1,
        total_pages: 0,
        total_items: 0,
        per_page: 20,
        has_more: false,
        next_cursor: null,
      },
    };
    expect((await get('?tag=no-such-tag')).body.data).toEqual(empty);
    expect((await get('?category=999999')).body.data).toEqual(empty);
    expect((await get('?category=2147483647')).body.data).toEqual(empty);
  });

  it.each([
    'page=0',
    'page=-1',
    'page=1.5',
    'page=abc',
    'page=1000001',
    'limit=0',
    'limit=101',
    'limit=ten',
    'sort=bogus',
    'sort=',
    'sort=NEWEST',
    'tag=',
    `tag=${'x'.repeat(101)}`,
    'category=abc',
    'category=0',
    'category=2147483648',
    'category=99999999999999999999',
    'limit=1&limit=2',
    'sort=newest&sort=votes',
    'tag=ipa&tag=stout',
  ])('refuses %s with 400 and the error body', async (query) => {
    const { status, body } = await get(`?${query}`);
    expect(status).toBe(400);
    expect(body).toEqual({ error: true, message: expect.any(String), code: 400 });
  });
});
