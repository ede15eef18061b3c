import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { CANDIDATES } from '../../shared/db/repositories/search.js';
import { questions } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addQuestion, addUser, at, readerOf } from './fixtures.js';
import { CACHE_ENV, changesDelivered } from './read-cache-support.js';

interface Hit {
  type: 'question' | 'answer' | 'user';
  id: number;
  score: number;
}

/** fromdate, todate and order on GET /api/search (issue 19 item 5), and total_bounded at the candidate bound. */
describe('GET /api/search: date windows, order, bounded totals', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const { ok, bad } = readerOf(() => app);
  const id: Record<string, number> = {};
  const keys = (results: Hit[]) => results.map((r) => `${r.type}:${r.id}`);
  const $ = (...names: string[]) => names.map((n) => id[n]);
  const unix = (d: Date) => d.getTime() / 1000;

  beforeAll(async () => {
    runtime = await createTestRuntime({ ...CACHE_ENV, RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    id.old_user = (await addUser(db, { username: 'lagerlout_old', createdAt: at(0) })).id;
    id.new_user = (await addUser(db, { username: 'lagerlout_new', createdAt: at(100) })).id;
    // Three questions and three answers about lager, ten minutes apart, with the same text (equal scores: the
    // order of ties shows).
    for (const [n, minutes] of [
      [1, 10],
      [2, 20],
      [3, 30],
    ] as const) {
      id[`q${n}`] = (
        await addQuestion(db, {
          authorId: id.old_user,
          title: `Crisp lager number ${n}`,
          content: 'Lager needs a cold ferment.',
          createdAt: at(minutes),
        })
      ).id;
      id[`a${n}`] = (
        await addAnswer(db, {
          questionId: id[`q${n}`]!,
          authorId: id.new_user,
          content: 'Lager it for a month.',
          createdAt: at(minutes + 5),
        })
      ).id;
    }
    // Zeppelin: three old matches, then more recent ones than a kind's candidates (inserted after: higher ids).
    for (let i = 0; i < 3; i++) {
      id[`old${i}`] = (
        await addQuestion(db, { authorId: id.old_user, title: `Zeppelin ${i}`, createdAt: at(1 + i) })
      ).id;
    }
    await db.insert(questions).values(
      Array.from({ length: CANDIDATES + 5 }, (_, i) => ({
        authorId: id.old_user!,
        title: `Zeppelin recent ${i}`,
        slug: `zeppelin-recent-${i}`,
        content: 'Plain body.',
        createdAt: at(1000 + i),
      })),
    );
    await changesDelivered(runtime.database);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('a window keeps the questions, answers and users created within it (inclusive)', async () => {
    const all = await ok('/api/search?q=lager&type=questions');
    expect(all.results).toHaveLength(3);
    const from = at(20).toISOString();
    const to = unix(at(30));
    const windowed = await ok(`/api/search?q=lager&type=questions&fromdate=${from}&todate=${to}`);
    expect(keys(windowed.results).sort()).toEqual([`question:${id.q2}`, `question:${id.q3}`].sort());
    expect(windowed.pagination).toEqual({
      current_page: 1,
      total_pages: 1,
      total_items: 2,
      per_page: 20,
      has_more: false,
    });
    const answers = await ok(`/api/search?q=lager&type=answers&fromdate=${at(20).toISOString()}`);
    expect(answers.results.map((r: Hit) => r.id).sort()).toEqual($('a2', 'a3').sort());
    expect((await ok(`/api/search?q=lager&type=answers&todate=${at(15).toISOString()}`)).results).toEqual([
      expect.objectContaining({ type: 'answer', id: id.a1 }),
    ]);
    // type=all: every kind is windowed, users by their creation date.
    const mixed = await ok(`/api/search?q=lager&fromdate=2024-01-01T00:24:00Z&todate=2024-01-01T00:26:00Z`);
    expect(keys(mixed.results)).toEqual([`answer:${id.a2}`]);
    const users = await ok('/api/search?q=lagerlout&type=users');
    expect(users.results.map((r: Hit) => r.id).sort()).toEqual($('old_user', 'new_user').sort());
    expect(keys((await ok(`/api/search?q=lagerlout&type=users&fromdate=${unix(at(50))}`)).results)).toEqual([
      `user:${id.new_user}`,
    ]);
    // A text of one or two characters takes the prefix branch of the user names: windowed too.
    expect(keys((await ok(`/api/search?q=la&type=users&todate=${unix(at(50))}`)).results)).toEqual([
      `user:${id.old_user}`,
    ]);
    // An offset, encoded or sent as a bare + (read as a space): 00:25 at +02:00 is 22:25 the day before.
    for (const offset of ['%2B02:00', '+02:00', '%2B0200']) {
      const early = await ok(`/api/search?q=lager&type=questions&todate=2024-01-01T02:25:00${offset}`);
      expect(keys(early.results).sort()).toEqual([`question:${id.q1}`, `question:${id.q2}`].sort());
    }
    // An empty window finds nothing, without an error.
    expect((await ok('/api/search?q=lager&fromdate=2030-01-01')).results).toEqual([]);
    expect((await ok('/api/search?q=lager&fromdate=2024-02-01&todate=2024-01-01')).results).toEqual([]);
  });

  it('a window picks the candidates: old matches beyond the most recent CANDIDATES are found', async () => {
    const recent = await ok('/api/search?q=zeppelin&type=questions&limit=100&page=3');
    expect(recent.pagination.total_items).toBe(CANDIDATES);
    const all = new Set<number>();
    for (let page = 1; page <= CANDIDATES / 100; page++) {
      for (const r of (await ok(`/api/search?q=zeppelin&type=questions&limit=100&page=${page}`)).results)
        all.add(r.id);
    }
    expect($('old0', 'old1', 'old2').some((n) => all.has(n!))).toBe(false);
    const old = await ok(`/api/search?q=zeppelin&type=questions&todate=${at(10).toISOString()}`);
    expect(old.results.map((r: Hit) => r.id).sort()).toEqual($('old0', 'old1', 'old2').sort());
    expect(old.pagination).toEqual({
      current_page: 1,
      total_pages: 1,
      total_items: 3,
      per_page: 20,
      has_more: false,
    });
  });

  it('reports total_bounded when a kind reached its candidates, and only then', async () => {
    const bounded = await ok('/api/search?q=zeppelin');
    expect(bounded.pagination).toEqual({
      current_page: 1,
      total_pages: CANDIDATES / 20,
      total_items: CANDIDATES,
      per_page: 20,
      has_more: true,
      total_bounded: true,
    });
    expect((await ok('/api/search?q=zeppelin&type=questions&order=asc')).pagination.total_bounded).toBe(true);
    // A window under the bound: exact, no flag.
    const exact = await ok(`/api/search?q=zeppelin&todate=${at(500).toISOString()}`);
    expect(exact.pagination).not.toHaveProperty('total_bounded');
    expect((await ok('/api/search?q=lager')).pagination).not.toHaveProperty('total_bounded');
    expect((await ok('/api/search?q=lagerlout&type=users')).pagination).not.toHaveProperty('total_bounded');
  });

  it('order=desc (default) is the most relevant first; asc reverses it, ties by kind and id included', async () => {
    const desc = await ok('/api/search?q=lager');
    expect(desc.results.length).toBeGreaterThan(4);
    expect(await ok('/api/search?q=lager&order=desc')).toEqual(desc);
    const asc = await ok('/api/search?q=lager&order=asc');
    expect(keys(asc.results)).toEqual(keys(desc.results).reverse());
    const scores = asc.results.map((r: Hit) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    expect(asc.pagination).toEqual(desc.pagination);
    // Equal scores (the answers have the same text): ids ascending under asc, descending under desc.
    const answers = (q: { results: Hit[] }) => q.results.filter((r) => r.type === 'answer').map((r) => r.id);
    expect(answers(desc)).toEqual($('a3', 'a2', 'a1'));
    expect(answers(asc)).toEqual($('a1', 'a2', 'a3'));
    // Pages of the reversed ranking: the same rows, in the reversed order.
    const first = await ok('/api/search?q=lager&order=asc&limit=2');
    const second = await ok('/api/search?q=lager&order=asc&limit=2&page=2');
    expect([...keys(first.results), ...keys(second.results)]).toEqual(keys(asc.results).slice(0, 4));
    // Windows and order together.
    const windowed = await ok(`/api/search?q=zeppelin&type=questions&todate=${unix(at(10))}&order=asc`);
    expect(windowed.results.map((r: Hit) => r.id)).toEqual($('old0', 'old1', 'old2'));
  });

  it('refuses bad windows and orders with the lists’ 400s, never a 500', async () => {
    for (const query of [
      'fromdate=yesterday',
      'fromdate=2024-02-30',
      'todate=2024-13-01',
      'fromdate=2024-01-01T25:00:00Z',
      'fromdate=99999999999999',
      'todate=%2B02:00',
      'todate=+02:00',
      'fromdate=2024-01-01T00:00:00%2B24:00',
    ]) {
      // The same message as the lists give for the same value.
      const message = await bad(`/api/search?q=lager&${query}`);
      expect(message).toBe(await bad(`/api/questions?${query}`));
      expect(message).toMatch(/^(fromdate|todate) must be a date/);
    }
    for (const query of [
      'fromdate=',
      'todate=',
      'order=',
      'order=up',
      'order=ASC',
      'fromdate=%00',
      'todate=2024-01-01%00',
      `fromdate=${'9'.repeat(500)}`,
      'fromdate=2024-01-01&fromdate=2024-01-02',
      'order=asc&order=desc',
    ]) {
      const message = await bad(`/api/search?q=lager&${query}`);
      expect(message, query).not.toMatch(/internal/i);
    }
  });

  it('the read cache keys a search by its window and order', async () => {
    const base = '/api/search?q=lager&type=questions';
    const miss = await app.inject(base);
    expect((await app.inject(base)).headers['x-cache']).toBe('hit');
    const windowed = await app.inject(`${base}&fromdate=${at(25).toISOString()}`);
    expect(windowed.headers['x-cache']).toBe('miss');
    expect(windowed.json().data.results).toHaveLength(1);
    const asc = await app.inject(`${base}&order=asc`);
    expect(asc.headers['x-cache']).toBe('miss');
    expect(asc.json().data.results.map((r: Hit) => r.id)).toEqual(
      miss
        .json()
        .data.results.map((r: Hit) => r.id)
        .reverse(),
    );
    expect(asc.headers.etag).toBeDefined();
    expect(asc.headers.etag).not.toBe(miss.headers.etag);
    const again = await app.inject({
      url: `${base}&order=asc`,
      headers: { 'if-none-match': asc.headers.etag! },
    });
    expect(again.statusCode).toBe(304);
  });
});
