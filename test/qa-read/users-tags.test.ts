import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addQuestion, addTag, addUser, at } from './fixtures.js';

describe('GET /api/users, /api/users/{id}, /api/tags', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const users: { id: number; reputation: number; created: number; name: string }[] = [];
  const tags: { id: number; name: string; count: number; created: number }[] = [];

  const get = async (url: string) => {
    const res = await app.inject(url);
    return { status: res.statusCode, body: res.json() };
  };
  const idsOf = (list: { id: number }[]) => list.map((x) => x.id);

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    // 23 users; reputations and join times repeat so that the id tie-breaker decides.
    const names =
      'Quinn Ada Mia Bea Lou Cy Eve Dan Flo Gus Hal Ivy Jo Kim Lee Max Ned Oz Pia Rae Sal Tom Uma'.split(' ');
    for (let i = 0; i < names.length; i++) {
      const u = await addUser(db, {
        username: `${names[i]!.toLowerCase()}_${i}`,
        displayName: names[i]!,
        reputation: (i * 37) % 7,
        createdAt: at(Math.floor(i / 2)),
        bio: `Bio ${i}`,
        avatar: `https://example.test/${i}.png`,
        badgeGold: i,
        badgeSilver: i + 1,
        badgeBronze: i + 2,
      });
      users.push({ id: u.id, reputation: u.reputation, created: Math.floor(i / 2), name: names[i]! });
    }
    const tagNames = ['yeast', 'hops', 'malt', 'water', 'kegging', 'bottling'];
    for (let i = 0; i < tagNames.length; i++) {
      const t = await addTag(db, tagNames[i]!, at(i % 3));
      tags.push({ id: t.id, name: t.name, count: 0, created: i % 3 });
    }
    // Question counts per tag: 3, 1, 3, 0, 2, 0 (ties broken by id).
    const counts = [3, 1, 3, 0, 2, 0];
    for (let q = 0; q < 3; q++) {
      const tagIds = tags.filter((_, i) => counts[i]! > q).map((t) => t.id);
      const question = await addQuestion(db, { authorId: users[0]!.id, tagIds });
      await addAnswer(db, { questionId: question.id, authorId: users[1]!.id });
    }
    counts.forEach((c, i) => (tags[i]!.count = c));
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('lists users by reputation by default, 20 per page, each item the public profile', async () => {
    const { status, body } = await get('/api/users');
    expect(status).toBe(200);
    const expected = [...users].sort((a, b) => b.reputation - a.reputation || b.id - a.id).map((u) => u.id);
    expect(idsOf(body.data.users)).toEqual(expected.slice(0, 20));
    expect(body.data.pagination).toEqual({
      current_page: 1,
      total_pages: 2,
      total_items: 23,
      per_page: 20,
      has_more: true,
      next_cursor: expect.any(String),
    });
    const page2 = await get('/api/users?page=2');
    expect(idsOf(page2.body.data.users)).toEqual(expected.slice(20));
  });

  it.each([
    [
      'reputation',
      (a: (typeof users)[0], b: (typeof users)[0]) => b.reputation - a.reputation || b.id - a.id,
    ],
    ['newest', (a: (typeof users)[0], b: (typeof users)[0]) => b.created - a.created || b.id - a.id],
    [
      'name',
      (a: (typeof users)[0], b: (typeof users)[0]) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id,
    ],
  ] as const)('sort=%s orders the users, pages never overlap', async (sort, compare) => {
    const expected = [...users].sort(compare).map((u) => u.id);
    const seen: number[] = [];
    for (let page = 1; page <= 3; page++) {
      const { body } = await get(`/api/users?sort=${sort}&limit=10&page=${page}`);
      expect(body.data.pagination).toEqual({
        current_page: page,
        total_pages: 3,
        total_items: 23,
        per_page: 10,
        has_more: page < 3,
        next_cursor: page < 3 ? expect.any(String) : null,
      });
      seen.push(...idsOf(body.data.users));
    }
    expect(seen).toEqual(expected);
  });

  it('GET /users/{id} answers the User of the spec; counters follow the rows', async () => {
    const { status, body } = await get(`/api/users/${users[1]!.id}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      data: {
        id: users[1]!.id,
        username: 'ada_1',
        display_name: 'Ada',
        avatar: 'https://example.test/1.png',
        bio: 'Bio 1',
        reputation: users[1]!.reputation,
        badges: { gold: 1, silver: 2, bronze: 3 },
        questions_count: 0,
        answers_count: 3,
        joined_at: '2024-01-01T00:00:00.000Z',
      },
    });
    expect((await get(`/api/users/${users[0]!.id}`)).body.data.questions_count).toBe(3);
    // The list item is the same profile.
    const listed = (await get('/api/users?sort=newest&limit=100')).body.data.users.find(
      (u: { id: number }) => u.id === users[1]!.id,
    );
    expect(listed).toEqual(body.data);
  });

  it.each(['999999', '2147483648', '9007199254740991'])('GET /users/%s is a 404', async (id) => {
    const { status, body } = await get(`/api/users/${id}`);
    expect(status).toBe(404);
    expect(body).toEqual({ error: true, message: 'User not found', code: 404 });
  });

  it.each(['abc', '0', '-3', '1.5', '99999999999999999999', "1'%20OR%20'1'='1"])(
    'GET /users/%s is a 400',
    async (id) => {
      const { status, body } = await get(`/api/users/${id}`);
      expect(status).toBe(400);
      expect(body.code).toBe(400);
    },
  );

  it('lists tags by popularity by default with pagination', async () => {
    const { status, body } = await get('/api/tags');
    expect(status).toBe(200);
    const expected = [...tags].sort((a, b) => b.count - a.count || b.id - a.id).map((t) => t.id);
    expect(idsOf(body.data.tags)).toEqual(expected);
    expect(body.data.pagination).toEqual({
      current_page: 1,
      total_pages: 1,
      total_items: 6,
      per_page: 20,
      has_more: false,
      next_cursor: null,
    });
    expect(body.data.tags[0]).toEqual({
      id: expected[0],
      name: expect.any(String),
      slug: expect.any(String),
      description: expect.stringMatching(/^About /),
      questions_count: 3,
    });
  });

  it.each([
    ['popular', (a: (typeof tags)[0], b: (typeof tags)[0]) => b.count - a.count || b.id - a.id],
    ['name', (a: (typeof tags)[0], b: (typeof tags)[0]) => a.name.localeCompare(b.name)],
    ['newest', (a: (typeof tags)[0], b: (typeof tags)[0]) => b.created - a.created || b.id - a.id],
  ] as const)('tags sort=%s, 4 per page', async (sort, compare) => {
    const expected = [...tags].sort(compare).map((t) => t.id);
    const first = await get(`/api/tags?sort=${sort}&limit=4`);
    const second = await get(`/api/tags?sort=${sort}&limit=4&page=2`);
    expect(first.body.data.pagination).toEqual({
      current_page: 1,
      total_pages: 2,
      total_items: 6,
      per_page: 4,
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect([...idsOf(first.body.data.tags), ...idsOf(second.body.data.tags)]).toEqual(expected);
    expect((await get(`/api/tags?sort=${sort}&page=3&limit=4`)).body.data.tags).toEqual([]);
  });

  it.each([
    '/api/users?sort=bogus',
    '/api/users?sort=popular',
    '/api/users?page=0',
    '/api/users?limit=101',
    '/api/users?page=1&page=2',
    '/api/tags?sort=bogus',
    '/api/tags?sort=reputation',
    '/api/tags?page=-1',
    '/api/tags?limit=0',
    '/api/tags?sort=name&sort=popular',
  ])('%s is a 400', async (url) => {
    const { status, body } = await get(url);
    expect(status).toBe(400);
    expect(body).toEqual({ error: true, message: expect.any(String), code: 400 });
  });
});
