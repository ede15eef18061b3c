import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addComment, addQuestion, addUser, at } from './fixtures.js';

describe('GET /api/questions/{id} and /api/questions/{id}/answers', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let question: { id: number; slug: string };
  let bare: { id: number; slug: string };
  let numericSlug: { id: number; slug: string };
  const answerIds: Record<string, number> = {};
  const commentIds: Record<string, number> = {};
  let asker: { id: number; username: string };
  let helper: { id: number; username: string };

  const get = async (url: string) => {
    const res = await app.inject(url);
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    asker = await addUser(db, { username: 'asker' });
    helper = await addUser(db, { username: 'helper' });
    question = await addQuestion(db, {
      authorId: asker.id,
      title: 'Why is my lager cloudy?',
      slug: 'why-is-my-lager-cloudy',
      content: 'It stays hazy after weeks.',
      createdAt: at(0),
    });
    bare = await addQuestion(db, { authorId: asker.id, title: 'No answers here', createdAt: at(1) });
    // Answers: votes order must be accepted first, then votes desc, then oldest.
    answerIds.old = (
      await addAnswer(db, { questionId: question.id, authorId: helper.id, votes: 3, createdAt: at(10) })
    ).id;
    answerIds.top = (
      await addAnswer(db, { questionId: question.id, authorId: helper.id, votes: 9, createdAt: at(20) })
    ).id;
    answerIds.accepted = (
      await addAnswer(db, {
        questionId: question.id,
        authorId: asker.id,
        votes: 1,
        isAccepted: true,
        createdAt: at(30),
      })
    ).id;
    answerIds.tie = (
      await addAnswer(db, { questionId: question.id, authorId: helper.id, votes: 3, createdAt: at(40) })
    ).id;
    commentIds.q2 = (
      await addComment(db, { questionId: question.id, authorId: helper.id, createdAt: at(50), votes: 2 })
    ).id;
    commentIds.q1 = (
      await addComment(db, { questionId: question.id, authorId: asker.id, createdAt: at(5) })
    ).id;
    commentIds.a1 = (
      await addComment(db, { answerId: answerIds.top!, authorId: asker.id, createdAt: at(21) })
    ).id;
    commentIds.a2 = (
      await addComment(db, { answerId: answerIds.top!, authorId: helper.id, createdAt: at(22) })
    ).id;
    // A question whose slug is digits: found by slug when no question has that id.
    numericSlug = await addQuestion(db, {
      authorId: asker.id,
      title: '2024',
      slug: '987654',
      createdAt: at(2),
    });
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('returns the question by id and by slug, as data itself', async () => {
    const byId = await get(`/api/questions/${question.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toEqual({
      id: question.id,
      title: 'Why is my lager cloudy?',
      slug: 'why-is-my-lager-cloudy',
      content: 'It stays hazy after weeks.',
      votes: 0,
      views: 0,
      answers_count: 4,
      has_accepted: true,
      author: { id: asker.id, username: 'asker', avatar: '' },
      tags: [],
      created_at: '2024-01-01T00:00:00.000Z',
    });
    const bySlug = await get('/api/questions/why-is-my-lager-cloudy');
    expect(bySlug.body.data).toEqual(byId.body.data);
    expect((await get('/api/questions/987654')).body.data.id).toBe(numericSlug.id);
  });

  it('include=answers adds the answers, accepted first, then votes, then oldest', async () => {
    const { status, body } = await get(`/api/questions/${question.id}?include=answers`);
    expect(status).toBe(200);
    expect(body.data.answers.map((a: { id: number }) => a.id)).toEqual([
      answerIds.accepted,
      answerIds.top,
      answerIds.old,
      answerIds.tie,
    ]);
    expect(body.data.answers[0]).toEqual({
      id: answerIds.accepted,
      content: expect.any(String),
      votes: 1,
      is_accepted: true,
      author: { id: asker.id, username: 'asker' },
      created_at: '2024-01-01T00:30:00.000Z',
    });
    expect(body.data.comments).toBeUndefined();
    expect(body.data.answers[1].comments).toBeUndefined();
  });

  it("include=comments adds the question's comments, oldest first, in the Comment shape", async () => {
    const { body } = await get(`/api/questions/${question.slug}?include=comments`);
    expect(body.data.answers).toBeUndefined();
    expect(body.data.comments).toEqual([
      {
        id: commentIds.q1,
        content: expect.any(String),
        votes: 0,
        author: { id: asker.id, username: 'asker' },
        created_at: '2024-01-01T00:05:00.000Z',
      },
      {
        id: commentIds.q2,
        content: expect.any(String),
        votes: 2,
        author: { id: helper.id, username: 'helper' },
        created_at: '2024-01-01T00:50:00.000Z',
      },
    ]);
  });

  it('include=answers,comments puts each answer its own comments', async () => {
    for (const include of ['answers,comments', 'comments,answers', 'answers,comments,answers']) {
      const { status, body } = await get(`/api/questions/${question.id}?include=${include}`);
      expect(status).toBe(200);
      expect(body.data.comments.map((c: { id: number }) => c.id)).toEqual([commentIds.q1, commentIds.q2]);
      const comments = Object.fromEntries(
        body.data.answers.map((a: { id: number; comments: { id: number }[] }) => [
          a.id,
          a.comments.map((c) => c.id),
        ]),
      );
      expect(comments).toEqual({
        [answerIds.accepted!]: [],
        [answerIds.top!]: [commentIds.a1, commentIds.a2],
        [answerIds.old!]: [],
        [answerIds.tie!]: [],
      });
    }
  });

  it('includes empty lists for a question without answers or comments', async () => {
    const { body } = await get(`/api/questions/${bare.id}?include=answers,comments`);
    expect(body.data.answers).toEqual([]);
    expect(body.data.comments).toEqual([]);
  });

  it.each([
    'bogus',
    'answers,bogus',
    '',
    'answers,',
    ',answers',
    'ANSWERS',
    'answers comments',
    'answers;comments',
  ])('refuses include=%s with 400', async (include) => {
    const { status, body } = await get(
      `/api/questions/${question.id}?include=${encodeURIComponent(include)}`,
    );
    expect(status).toBe(400);
    expect(body).toEqual({ error: true, message: expect.any(String), code: 400 });
  });

  it('refuses a repeated include with 400', async () => {
    expect((await get(`/api/questions/${question.id}?include=answers&include=comments`)).status).toBe(400);
  });

  it.each([
    '999999',
    '2147483647',
    '2147483648',
    '99999999999999999999',
    'no-such-question',
    '0',
    '-1',
    'ünïcödé-slug',
  ])('answers 404 for the unknown question %s', async (key) => {
    for (const url of [
      `/api/questions/${encodeURIComponent(key)}`,
      `/api/questions/${encodeURIComponent(key)}/answers`,
    ]) {
      const { status, body } = await get(url);
      expect(status).toBe(404);
      expect(body).toEqual({ error: true, message: 'Question not found', code: 404 });
    }
  });

  it.each([
    ['votes', () => [answerIds.accepted, answerIds.top, answerIds.old, answerIds.tie]],
    ['newest', () => [answerIds.tie, answerIds.accepted, answerIds.top, answerIds.old]],
    ['oldest', () => [answerIds.old, answerIds.top, answerIds.accepted, answerIds.tie]],
  ] as const)('GET /answers?sort=%s orders the answers', async (sort, expected) => {
    const { status, body } = await get(`/api/questions/${question.id}/answers?sort=${sort}`);
    expect(status).toBe(200);
    expect(body.data.answers.map((a: { id: number }) => a.id)).toEqual(expected());
  });

  it('GET /answers defaults to votes, works by slug, and answers [] for a question without answers', async () => {
    const byDefault = await get(`/api/questions/${question.slug}/answers`);
    expect(byDefault.body.data.answers.map((a: { id: number }) => a.id)).toEqual([
      answerIds.accepted,
      answerIds.top,
      answerIds.old,
      answerIds.tie,
    ]);
    expect(byDefault.body.data.answers[0]).not.toHaveProperty('comments');
    expect((await get(`/api/questions/${bare.id}/answers`)).body).toEqual({
      success: true,
      data: { answers: [] },
    });
  });

  it.each(['bogus', '', 'VOTES', 'votes&sort=newest'])(
    'GET /answers refuses sort=%s with 400',
    async (sort) => {
      const { status, body } = await get(`/api/questions/${question.id}/answers?sort=${sort}`);
      expect(status).toBe(400);
      expect(body.code).toBe(400);
    },
  );
});
