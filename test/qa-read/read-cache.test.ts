import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addTag, addUser } from './fixtures.js';
import { CACHE_ENV, changesDelivered, writeSilently } from './read-cache-support.js';

/**
 * The read cache in one process (services/http/read-cache.ts). Whether an answer came from the cache is proven by
 * content, not by time: rows are changed with triggers off (no counter moves, no change notification), so only a
 * cached answer can still show the old value. The TTL is far longer than any test, so only an invalidation can
 * explain a fresh answer.
 */

type App = Awaited<ReturnType<typeof buildQaApp>>;

describe('the Q&A read cache', () => {
  let runtime: TestRuntime;
  let app: App;
  let question: { id: number };
  let alice: { id: number };
  let tag: { id: number };
  let bobAuth: { authorization: string };

  beforeAll(async () => {
    runtime = await createTestRuntime(CACHE_ENV);
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    alice = await addUser(db, { username: 'cache_alice' });
    await addUser(db, { username: 'cache_bob' });
    tag = await addTag(db, 'mead');
    question = await addQuestion(db, { authorId: alice.id, title: 'Honey for a dry mead', tagIds: [tag.id] });
    const { key } = await createApiKey(db, {
      username: 'cache_bob',
      plan: 'authenticated',
      scopes: ['qa:write'],
    });
    bobAuth = { authorization: `Bearer ${key}` };
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('answers a repeated read from the cache until PostgreSQL notifies a change', async () => {
    await changesDelivered(runtime.database);
    const url = '/api/questions?sort=newest';
    const first = await app.inject(url);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('miss');
    const second = await app.inject(url);
    expect(second.headers['x-cache']).toBe('hit');
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);

    await writeSilently(
      runtime.database,
      sql`UPDATE questions SET title = 'Silently renamed' WHERE id = ${question.id}`,
    );
    const cached = await app.inject(url);
    expect(cached.headers['x-cache']).toBe('hit');
    expect(cached.json().data.questions[0].title).toBe('Honey for a dry mead');
    // Another URL is another entry: computed now, it shows what PostgreSQL holds.
    const other = await app.inject('/api/questions?sort=votes');
    expect(other.headers['x-cache']).toBe('miss');
    expect(other.json().data.questions[0].title).toBe('Silently renamed');

    // A write with triggers on, to any table a cached read shows, reaches the cache as a notification.
    await runtime.database.query(sql`UPDATE users SET bio = 'Beekeeper' WHERE id = ${alice.id}`);
    await vi.waitFor(
      async () => {
        const fresh = await app.inject(url);
        expect(fresh.json().data.questions[0].title).toBe('Silently renamed');
      },
      { timeout: 10_000 },
    );
  });

  it("serves a client its own write at once: the write empties this process's cache before it is answered", async () => {
    await changesDelivered(runtime.database);
    const answersUrl = `/api/questions/${question.id}/answers`;
    const listUrl = `/api/questions?tag=mead`;
    for (const url of [answersUrl, listUrl, answersUrl, listUrl]) await app.inject(url);
    expect((await app.inject(answersUrl)).headers['x-cache']).toBe('hit');
    expect((await app.inject(listUrl)).json().data.questions[0].answers_count).toBe(0);

    const posted = await app.inject({
      method: 'POST',
      url: `/api/questions/${question.id}/answers`,
      headers: bobAuth,
      payload: {
        content: 'Use a dry wine yeast and a little less honey than you think: 1.3 kg per 4 litres.',
      },
    });
    expect(posted.statusCode).toBe(201);
    // No waiting: the very next reads see the answer.
    const answers = await app.inject(answersUrl);
    expect(answers.headers['x-cache']).toBe('miss');
    expect(answers.json().data.answers.map((a: { id: number }) => a.id)).toEqual([posted.json().data.id]);
    expect((await app.inject(listUrl)).json().data.questions[0].answers_count).toBe(1);
  });

  it('empties the cache on a write that reached its handler, even one that changes nothing, never on a refused one', async () => {
    await changesDelivered(runtime.database);
    await app.inject('/api/tags');
    expect((await app.inject('/api/tags')).headers['x-cache']).toBe('hit');
    await writeSilently(
      runtime.database,
      sql`UPDATE tags SET description = 'Fermented honey' WHERE id = ${tag.id}`,
    );
    expect((await app.inject('/api/tags')).json().data.tags[0].description).toBe('About mead');

    // Refused before any handler: an unknown route, a bad key. Nothing changed, nothing is emptied.
    expect((await app.inject({ method: 'POST', url: '/api/no-such-endpoint' })).statusCode).toBe(404);
    const refused = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { authorization: 'Bearer agora_not-a-real-key' },
      payload: { poll_id: 999999, option_id: 1 },
    });
    expect(refused.statusCode).toBe(401);
    expect((await app.inject('/api/tags')).headers['x-cache']).toBe('hit');

    // Reached its handler (an unknown poll: 404), changed nothing: emptied all the same.
    const handled = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      payload: { poll_id: 999999, option_id: 1 },
    });
    expect(handled.statusCode).toBe(404);
    const after = await app.inject('/api/tags');
    expect(after.headers['x-cache']).toBe('miss');
    expect(after.json().data.tags[0].description).toBe('Fermented honey');
  });

  it('keeps ETags, 304s, HEAD and the rate-limit headers on a hit', async () => {
    await changesDelivered(runtime.database);
    const url = `/api/users/${alice.id}`;
    const first = await app.inject(url);
    expect(first.headers['x-cache']).toBe('miss');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"/);

    const hit = await app.inject(url);
    expect(hit.headers['x-cache']).toBe('hit');
    expect(hit.headers.etag).toBe(etag);
    expect(hit.headers['x-ratelimit-limit']).toBe(first.headers['x-ratelimit-limit']);
    expect(Number(hit.headers['x-ratelimit-remaining'])).toBe(
      Number(first.headers['x-ratelimit-remaining']) - 1,
    );

    const notModified = await app.inject({ url, headers: { 'if-none-match': etag } });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers['x-cache']).toBe('hit');
    expect(notModified.body).toBe('');

    const head = await app.inject({ method: 'HEAD', url });
    expect(head.statusCode).toBe(200);
    expect(head.headers['x-cache']).toBe('hit');
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(first.body)));
    expect(head.headers.etag).toBe(etag);
  });

  it('still authenticates a hit: a bad key is refused', async () => {
    await changesDelivered(runtime.database);
    await app.inject('/api/categories');
    expect((await app.inject('/api/categories')).headers['x-cache']).toBe('hit');
    const refused = await app.inject({ url: '/api/categories', headers: { authorization: 'Bearer nope' } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['x-cache']).toBeUndefined();
  });

  it('never caches an error', async () => {
    for (let i = 0; i < 2; i++) {
      const bad = await app.inject('/api/questions?limit=0');
      expect(bad.statusCode).toBe(400);
      expect(bad.headers['x-cache']).toBe('miss');
    }
    const [row] = await runtime.database.query<{ id: number }>(sql`SELECT max(id) + 1000 AS id FROM users`);
    const id = row!.id;
    expect((await app.inject(`/api/users/${id}`)).statusCode).toBe(404);
    expect((await app.inject(`/api/users/${id}`)).headers['x-cache']).toBe('miss');
    await writeSilently(
      runtime.database,
      sql`INSERT INTO users (id, username, display_name) VALUES (${id}, 'cache_ghost', 'Ghost')`,
    );
    const found = await app.inject(`/api/users/${id}`);
    expect(found.statusCode).toBe(200);
    expect(found.json().data.username).toBe('cache_ghost');
  });

  it("does not cache a question's detail, whose every read counts a view", async () => {
    const url = `/api/questions/${question.id}`;
    const first = await app.inject(url);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBeUndefined();
    await writeSilently(
      runtime.database,
      sql`UPDATE questions SET title = 'Renamed again' WHERE id = ${question.id}`,
    );
    expect((await app.inject(url)).json().data.title).toBe('Renamed again');
  });
});

describe('the rate limit in front of the read cache', () => {
  let runtime: TestRuntime;
  let app: App;

  beforeAll(async () => {
    runtime = await createTestRuntime({ QA_READ_CACHE_TTL_MS: '600000', RATE_LIMIT_ANONYMOUS_HOURLY: '3' });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('counts a hit like any read and refuses it past the budget', async () => {
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = await app.inject('/api/categories');
      expect(res.statusCode).toBe(200);
      seen.push([res.headers['x-cache'], res.headers['x-ratelimit-remaining']]);
    }
    expect(seen).toEqual([
      ['miss', '2'],
      ['hit', '1'],
      ['hit', '0'],
    ]);
    const refused = await app.inject('/api/categories');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.json()).toMatchObject({ error: true, code: 429 });
  });
});
