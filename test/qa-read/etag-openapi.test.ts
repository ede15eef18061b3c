import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { tags } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addTag, addUser } from './fixtures.js';

describe('ETags and the OpenAPI document of the read API', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let questionId: number;
  let userId: number;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    const user = await addUser(db, { username: 'etag_user' });
    userId = user.id;
    const tag = await addTag(db, 'cider');
    questionId = (
      await addQuestion(db, { authorId: user.id, title: 'Apple varieties for cider', tagIds: [tag.id] })
    ).id;
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  const readUrls = () => [
    '/api/questions',
    `/api/questions/${questionId}`,
    `/api/questions/${questionId}/answers`,
    '/api/users',
    `/api/users/${userId}`,
    '/api/tags',
    '/api/search?q=cider',
    '/api/categories',
  ];

  it('every read answers a weak ETag, and 304 with no body when If-None-Match names it', async () => {
    for (const url of readUrls()) {
      const first = await app.inject(url);
      expect(first.statusCode, url).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag, url).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
      const again = await app.inject({ url, headers: { 'if-none-match': etag } });
      expect(again.statusCode, url).toBe(304);
      expect(again.body, url).toBe('');
      expect(again.headers.etag).toBe(etag);
      // A list of tags, or the strong form of the same tag, matches too (weak comparison).
      const listed = await app.inject({ url, headers: { 'if-none-match': `W/"other", ${etag.slice(2)}` } });
      expect(listed.statusCode, url).toBe(304);
    }
  });

  it('answers 200 with the body when the ETag no longer matches, and a new ETag after a change', async () => {
    const first = await app.inject('/api/tags');
    const stale = await app.inject({ url: '/api/tags', headers: { 'if-none-match': 'W/"not-it"' } });
    expect(stale.statusCode).toBe(200);
    expect(stale.json().data.tags).toHaveLength(1);
    await runtime.database.db.insert(tags).values({ name: 'perry', slug: 'perry' });
    // A write behind the app's back (as by another process) reaches its read cache through PostgreSQL's change
    // notification, a moment after the commit.
    const changed = await vi.waitFor(
      async () => {
        const r = await app.inject({
          url: '/api/tags',
          headers: { 'if-none-match': first.headers.etag as string },
        });
        expect(r.statusCode).toBe(200);
        return r;
      },
      { timeout: 10_000 },
    );
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(changed.json().data.tags).toHaveLength(2);
  });

  it('gives errors no ETag and never a 304', async () => {
    const missing = await app.inject('/api/questions/no-such-question');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers.etag).toBeUndefined();
    const bad = await app.inject({ url: '/api/questions?limit=0', headers: { 'if-none-match': '*' } });
    expect(bad.statusCode).toBe(400);
  });

  it('lists every read route in /api/openapi.json with tags, summary, parameters and response schemas', async () => {
    const res = await app.inject('/api/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    const windows = ['fromdate', 'todate', 'min', 'max', 'order'];
    const commentList = ['sort', 'page', 'limit', 'cursor', ...windows];
    const expected: Record<string, string[]> = {
      '/api/questions': ['page', 'limit', 'cursor', 'sort', 'tag', 'category', ...windows],
      '/api/questions/{id}': ['id', 'include'],
      '/api/questions/{id}/answers': ['id', 'sort', ...windows],
      '/api/search': ['q', 'type', 'page', 'limit', 'fromdate', 'todate', 'order'],
      '/api/users': ['sort', 'page', 'limit', 'cursor', ...windows],
      '/api/users/{id}': ['id'],
      '/api/users/{id}/questions': ['id', 'sort', 'page', 'limit', 'cursor', 'tag', ...windows],
      '/api/users/{id}/answers': ['id', 'sort', 'page', 'limit', 'cursor', ...windows],
      '/api/users/{id}/comments': ['id', ...commentList],
      '/api/users/{id}/tags': ['id', 'sort', 'limit'],
      '/api/users/{id}/timeline': ['id', 'limit', 'cursor'],
      '/api/answers': ['sort', 'page', 'limit', 'cursor', ...windows],
      '/api/answers/{id}': ['id'],
      '/api/answers/{id}/comments': ['id', ...commentList],
      '/api/questions/{id}/comments': ['id', ...commentList],
      '/api/comments': commentList,
      '/api/tags/{slug}': ['slug'],
      '/api/tags/{slug}/related': ['slug', 'limit'],
      '/api/tags/{slug}/top-answerers': ['slug', 'period', 'limit'],
      '/api/info': [],
      '/api/tags': ['sort', 'page', 'limit', 'cursor'],
      '/api/categories': [],
    };
    for (const [path, parameters] of Object.entries(expected)) {
      const get = doc.paths[path]?.get;
      expect(get, path).toBeDefined();
      expect(get.tags?.length, path).toBeGreaterThan(0);
      expect(get.summary, path).toEqual(expect.any(String));
      expect((get.parameters ?? []).map((p: { name: string }) => p.name).sort(), path).toEqual(
        [...parameters].sort(),
      );
      const ok = get.responses['200'].content['application/json'].schema;
      expect(ok.properties.success, path).toBeDefined();
      expect(ok.properties.data, path).toBeDefined();
      expect(get.responses['4XX'] ?? get.responses['4xx'], path).toBeDefined();
    }
    const sort = doc.paths['/api/questions'].get.parameters.find((p: { name: string }) => p.name === 'sort');
    expect(sort.schema.enum).toEqual(['newest', 'votes', 'views', 'unanswered']);
    expect(sort.schema.default).toBe('newest');
    const data =
      doc.paths['/api/questions/{id}'].get.responses['200'].content['application/json'].schema.properties
        .data;
    // One id answers the named component QuestionDetail; several ids answer { questions } (issue 19).
    const single = (data.anyOf ?? [data]).find((s: { $ref?: string }) => s.$ref?.endsWith('/QuestionDetail'));
    const question = doc.components.schemas[single.$ref.split('/').pop()];
    expect(Object.keys(question.properties)).toEqual(
      expect.arrayContaining([
        'id',
        'title',
        'slug',
        'content',
        'votes',
        'views',
        'answers_count',
        'has_accepted',
        'author',
        'tags',
        'created_at',
        'answers',
        'comments',
      ]),
    );
  });

  it('renders the documentation at /api/docs', async () => {
    const res = await app.inject('/api/docs/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger/i);
  });
});
