import Fastify from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { Pagination, Question, QuestionDetail, success, User } from '../../services/qa/schemas.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addComment, addQuestion, addTag, addUser, at } from './fixtures.js';

// Text that JSON must escape, and text it must not: quotes, backslashes, control characters (short and \u forms),
// characters beyond the BMP, U+2028, markup.
const AWKWARD = 'a "quoted" \\ back\tslash\nline \u0001\u0008\u000b\u001f é 😀 \u2028 </script>';

/**
 * The question reads send JSON that PostgreSQL rendered (shared/db/repositories/question-json.ts), bypassing
 * Fastify's serialiser: their bodies must be, byte for byte, what that serialiser writes for the same data with the
 * routes' response schemas (member order, optional members, escaping).
 */
describe('question reads rendered by PostgreSQL', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const reference = Fastify();
  let ids: { marked: number; plain: number; author: number; slug: string };

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    const author = await addUser(db, {
      username: 'writer',
      displayName: `Writer ${AWKWARD}`,
      bio: AWKWARD,
      avatar: `https://example.test/${AWKWARD}`,
    });
    const other = await addUser(db, { username: 'other' });
    const tag = await addTag(db, 'hops');
    const marked = await addQuestion(db, {
      authorId: author.id,
      title: `Title ${AWKWARD}`,
      content: `<p>${AWKWARD}</p>`,
      contentMarkdown: AWKWARD,
      tagIds: [tag.id],
      createdAt: at(0),
    });
    const plain = await addQuestion(db, { authorId: other.id, tagIds: [tag.id], createdAt: at(1) });
    const accepted = await addAnswer(db, {
      questionId: marked.id,
      authorId: other.id,
      contentMarkdown: AWKWARD,
      isAccepted: true,
      createdAt: at(2),
    });
    await addAnswer(db, { questionId: marked.id, authorId: author.id, votes: 4, createdAt: at(3) });
    await addComment(db, {
      questionId: marked.id,
      authorId: other.id,
      contentMarkdown: AWKWARD,
      createdAt: at(4),
    });
    await addComment(db, { questionId: marked.id, authorId: author.id, createdAt: at(5) });
    await addComment(db, {
      answerId: accepted.id,
      authorId: author.id,
      contentMarkdown: AWKWARD,
      createdAt: at(6),
    });
    await addComment(db, { answerId: accepted.id, authorId: other.id, createdAt: at(7) });
    ids = { marked: marked.id, plain: plain.id, author: author.id, slug: marked.slug };

    // Fastify's own serialiser with the routes' response schemas, fed the parsed body back.
    const list = success(Type.Object({ questions: Type.Array(Question), pagination: Pagination }));
    const detail = success(Type.Union([QuestionDetail, Type.Object({ questions: Type.Array(Question) })]));
    reference.post('/list', { schema: { response: { 200: list } } }, async (request) => request.body);
    const users = success(Type.Object({ users: Type.Array(User), pagination: Pagination }));
    reference.post('/users', { schema: { response: { 200: users } } }, async (request) => request.body);
    reference.post('/detail', { schema: { response: { 200: detail } } }, async (request) => request.body);
    await reference.ready();
  });

  afterAll(async () => {
    await reference.close();
    await app?.close();
    await runtime?.close();
  });

  const expectSerialiserBytes = async (url: string, route: '/list' | '/detail' | '/users') => {
    const res = await app.inject(url);
    expect(res.statusCode, url).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const again = await reference.inject({ method: 'POST', url: route, payload: res.json() });
    expect(res.body, url).toBe(again.body);
    return res.json() as { data: Record<string, unknown> };
  };

  it('lists: every sort, a tag, a page past the first, a cursor, a user', async () => {
    for (const query of ['', '?sort=votes', '?sort=unanswered', '?tag=hops&order=asc', '?limit=1&page=2']) {
      await expectSerialiserBytes(`/api/questions${query}`, '/list');
    }
    const first = await expectSerialiserBytes('/api/questions?limit=1', '/list');
    const cursor = (first.data.pagination as { next_cursor: string }).next_cursor;
    await expectSerialiserBytes(`/api/questions?limit=1&cursor=${cursor}`, '/list');
    await expectSerialiserBytes(`/api/users/${ids.author}/questions`, '/list');
    const empty = await expectSerialiserBytes('/api/questions?tag=none', '/list');
    expect(empty.data.questions).toEqual([]);
  });

  it('users: every sort, a page past the first, a cursor', async () => {
    for (const query of ['', '?sort=name', '?sort=newest&order=asc', '?sort=name&limit=1&page=2']) {
      await expectSerialiserBytes(`/api/users${query}`, '/users');
    }
    const first = await expectSerialiserBytes('/api/users?sort=name&limit=1', '/users');
    const cursor = (first.data.pagination as { next_cursor: string }).next_cursor;
    const next = await expectSerialiserBytes(`/api/users?sort=name&limit=1&cursor=${cursor}`, '/users');
    const second = await expectSerialiserBytes('/api/users?sort=name&limit=1&page=2', '/users');
    expect(next.data.users).toEqual(second.data.users);
  });

  it('the detail with each include, by id and by slug, and several ids', async () => {
    for (const include of ['', '?include=answers', '?include=comments', '?include=comments,answers']) {
      const body = await expectSerialiserBytes(`/api/questions/${ids.marked}${include}`, '/detail');
      expect(body.data.content_markdown).toBe(AWKWARD);
      expect('answers' in body.data).toBe(include.includes('answers'));
      expect('comments' in body.data).toBe(include.includes('comments'));
    }
    const full = await expectSerialiserBytes(
      `/api/questions/${ids.slug}?include=answers,comments`,
      '/detail',
    );
    const answers = full.data.answers as Array<{ content_markdown?: string; comments: unknown[] }>;
    expect(answers.map((a) => [a.content_markdown, a.comments.length])).toEqual([
      [AWKWARD, 2],
      [undefined, 0],
    ]);
    await expectSerialiserBytes(`/api/questions/${ids.plain}`, '/detail');
    const many = await expectSerialiserBytes(`/api/questions/${ids.plain};999999;${ids.marked}`, '/detail');
    expect((many.data.questions as { id: number }[]).map((q) => q.id)).toEqual([ids.plain, ids.marked]);
  });
});
