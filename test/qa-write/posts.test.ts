import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER, COMMENT, expectError, questionBody, writeWorld, type Writer } from './helpers.js';

describe('answers, comments, votes and acceptance', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let asker: Writer;
  let helper: Writer;
  let other: Writer;

  beforeAll(async () => {
    world = await writeWorld();
    asker = await world.writer('asker');
    helper = await world.writer('helper');
    other = await world.writer('other');
  });
  afterAll(() => world.close());

  const send = (
    who: Writer | null,
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
  ) => world.app.inject({ method, url, headers: who?.auth ?? {}, ...(payload ? { payload } : {}) });
  const newQuestion = async () =>
    (await send(asker, 'POST', '/api/questions', questionBody())).json().data as { id: number; slug: string };
  const newAnswer = async (questionId: number, who: Writer = helper) =>
    (await send(who, 'POST', `/api/questions/${questionId}/answers`, { content: ANSWER })).json().data as {
      id: number;
    };

  it('answers a question (201, read shape), by id or slug, and the question counts it', async () => {
    const question = await newQuestion();
    const res = await send(helper, 'POST', `/api/questions/${question.slug}/answers`, {
      content: `  ${ANSWER}  `,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      success: true,
      data: {
        id: expect.any(Number),
        content: `<p>${ANSWER}</p>`,
        content_markdown: ANSWER,
        votes: 0,
        is_accepted: false,
        author: { id: helper.id, username: 'helper' },
        created_at: expect.any(String),
      },
    });
    const read = await world.app.inject(`/api/questions/${question.id}/answers`);
    expect(read.json().data.answers.map((a: { id: number }) => a.id)).toEqual([res.json().data.id]);
    expect((await world.app.inject(`/api/questions/${question.id}`)).json().data.answers_count).toBe(1);

    expectError(await send(helper, 'POST', '/api/questions/999999/answers', { content: ANSWER }), 404);
    expect(
      expectError(
        await send(helper, 'POST', `/api/questions/${question.id}/answers`, { content: 'Too short.' }),
        400,
      ),
    ).toMatch(/Content must be at least 30/);
  });

  it("edits one's own answer only", async () => {
    const question = await newQuestion();
    const answer = await newAnswer(question.id);
    const edited = await send(helper, 'PATCH', `/api/answers/${answer.id}`, {
      content: `${ANSWER} Edited to add: keep it out of the sun.`,
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data.content).toMatch(/Edited to add/);
    expect(
      expectError(await send(other, 'PATCH', `/api/answers/${answer.id}`, { content: ANSWER }), 403),
    ).toBe('Only the author can edit this answer');
    expectError(await send(helper, 'PATCH', '/api/answers/999999', { content: ANSWER }), 404);
    expectError(await send(helper, 'PATCH', '/api/answers/not-a-number', { content: ANSWER }), 404);
    expectError(await send(helper, 'PATCH', `/api/answers/${answer.id}`, { content: 'short' }), 400);
  });

  it('comments on questions and answers (201), readable with include=comments', async () => {
    const question = await newQuestion();
    const answer = await newAnswer(question.id);
    const onQuestion = await send(other, 'POST', `/api/questions/${question.id}/comments`, {
      content: COMMENT,
    });
    expect(onQuestion.statusCode).toBe(201);
    expect(onQuestion.json().data).toEqual({
      id: expect.any(Number),
      content: COMMENT,
      content_markdown: COMMENT,
      votes: 0,
      author: { id: other.id, username: 'other' },
      created_at: expect.any(String),
    });
    const onAnswer = await send(asker, 'POST', `/api/answers/${answer.id}/comments`, {
      content: 'Thanks, that worked for me!',
    });
    expect(onAnswer.statusCode).toBe(201);

    const read = (await world.app.inject(`/api/questions/${question.id}?include=answers,comments`)).json()
      .data;
    expect(read.comments.map((c: { content: string }) => c.content)).toEqual([COMMENT]);
    expect(read.answers[0].comments.map((c: { content: string }) => c.content)).toEqual([
      'Thanks, that worked for me!',
    ]);

    expect(
      expectError(
        await send(other, 'POST', `/api/questions/${question.id}/comments`, { content: 'Too short' }),
        400,
      ),
    ).toMatch(/Comment must be at least 15/);
    expectError(
      await send(other, 'POST', `/api/answers/${answer.id}/comments`, { content: 'x'.repeat(601) }),
      400,
    );
    expectError(await send(other, 'POST', '/api/questions/999999/comments', { content: COMMENT }), 404);
    expectError(await send(other, 'POST', '/api/answers/999999/comments', { content: COMMENT }), 404);
  });

  it('votes on a question: up, changed, removed; one vote per user; reputation follows (+10 / −2)', async () => {
    const question = await newQuestion();
    const url = `/api/questions/${question.id}/vote`;
    const start = await world.reputation(asker.id);
    const up = await send(helper, 'PUT', url, { value: 1 });
    expect(up.json()).toEqual({ success: true, data: { id: question.id, votes: 1, user_vote: 1 } });
    expect((await send(helper, 'PUT', url, { value: 1 })).json().data.votes).toBe(1);
    expect(await world.reputation(asker.id)).toBe(start + 10);

    expect((await send(other, 'PUT', url, { value: 1 })).json().data.votes).toBe(2);
    expect((await send(helper, 'PUT', url, { value: -1 })).json().data).toEqual({
      id: question.id,
      votes: 0,
      user_vote: -1,
    });
    expect(await world.reputation(asker.id)).toBe(start + 10 - 2);
    expect(await world.reputation(helper.id)).toBe(1);

    expect((await send(helper, 'DELETE', url)).json().data).toEqual({
      id: question.id,
      votes: 1,
      user_vote: 0,
    });
    expect((await send(other, 'POST', url, { value: 0 })).json().data).toEqual({
      id: question.id,
      votes: 0,
      user_vote: 0,
    });
    expect(await world.reputation(asker.id)).toBe(start);
    expect((await world.app.inject(`/api/questions/${question.id}`)).json().data.votes).toBe(0);
  });

  it('votes on an answer: a downvote costs the voter 1 and the author 2', async () => {
    const question = await newQuestion();
    const answer = await newAnswer(question.id);
    const [helperStart, otherStart] = [await world.reputation(helper.id), await world.reputation(other.id)];
    const down = await send(other, 'PUT', `/api/answers/${answer.id}/vote`, { value: -1 });
    expect(down.json().data).toEqual({ id: answer.id, votes: -1, user_vote: -1 });
    expect(await world.reputation(helper.id)).toBe(helperStart - 2);
    expect(await world.reputation(other.id)).toBe(otherStart - 1);
    expect((await send(other, 'PUT', `/api/answers/${answer.id}/vote`, { value: 1 })).json().data.votes).toBe(
      1,
    );
    expect(await world.reputation(helper.id)).toBe(helperStart + 10);
    expect(await world.reputation(other.id)).toBe(otherStart);
  });

  it("refuses votes on one's own post (403), on unknown posts (404) and bad values (400)", async () => {
    const question = await newQuestion();
    const answer = await newAnswer(question.id);
    expect(
      expectError(await send(asker, 'PUT', `/api/questions/${question.id}/vote`, { value: 1 }), 403),
    ).toBe('You cannot vote on your own post');
    expectError(await send(helper, 'PUT', `/api/answers/${answer.id}/vote`, { value: -1 }), 403);
    expectError(await send(helper, 'PUT', '/api/questions/999999/vote', { value: 1 }), 404);
    expectError(await send(helper, 'DELETE', '/api/answers/999999/vote'), 404);
    expectError(await send(helper, 'PUT', `/api/questions/${question.id}/vote`, { value: 2 }), 400);
    expectError(await send(helper, 'PUT', `/api/questions/${question.id}/vote`, {}), 400);
    const [votes] = await world.runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM votes WHERE question_id = ${question.id}`,
    );
    expect(votes!.n).toBe(0);
  });

  it('accepts an answer (question author only): one at a time, has_accepted / is_accepted follow, +15 / +2', async () => {
    const question = await newQuestion();
    const first = await newAnswer(question.id, helper);
    const second = await newAnswer(question.id, other);
    const [askerStart, helperStart, otherStart] = [
      await world.reputation(asker.id),
      await world.reputation(helper.id),
      await world.reputation(other.id),
    ];

    expect(expectError(await send(helper, 'POST', `/api/answers/${first.id}/accept`), 403)).toBe(
      "Only the question's author can accept an answer",
    );
    expectError(await send(asker, 'POST', '/api/answers/999999/accept'), 404);

    const accepted = await send(asker, 'POST', `/api/answers/${first.id}/accept`);
    expect(accepted.json()).toEqual({
      success: true,
      data: { question_id: question.id, answer_id: first.id, is_accepted: true, has_accepted: true },
    });
    expect(await world.reputation(helper.id)).toBe(helperStart + 15);
    expect(await world.reputation(asker.id)).toBe(askerStart + 2);
    // Accepting again changes nothing.
    await send(asker, 'POST', `/api/answers/${first.id}/accept`);
    expect(await world.reputation(helper.id)).toBe(helperStart + 15);

    await send(asker, 'POST', `/api/answers/${second.id}/accept`);
    const answers = (await world.app.inject(`/api/questions/${question.id}/answers`)).json().data.answers;
    expect(answers.map((a: { id: number; is_accepted: boolean }) => [a.id, a.is_accepted])).toEqual([
      [second.id, true],
      [first.id, false],
    ]);
    expect(await world.reputation(helper.id)).toBe(helperStart);
    expect(await world.reputation(other.id)).toBe(otherStart + 15);
    expect(await world.reputation(asker.id)).toBe(askerStart + 2);

    const withdrawn = await send(asker, 'DELETE', `/api/answers/${second.id}/accept`);
    expect(withdrawn.json().data).toEqual({
      question_id: question.id,
      answer_id: second.id,
      is_accepted: false,
      has_accepted: false,
    });
    expect((await world.app.inject(`/api/questions/${question.id}`)).json().data.has_accepted).toBe(false);
    expect(await world.reputation(other.id)).toBe(otherStart);
    expect(await world.reputation(asker.id)).toBe(askerStart);
  });

  it("gives no reputation for accepting one's own answer", async () => {
    const question = await newQuestion();
    const own = await newAnswer(question.id, asker);
    const before = await world.reputation(asker.id);
    const res = await send(asker, 'POST', `/api/answers/${own.id}/accept`);
    expect(res.json().data.has_accepted).toBe(true);
    expect(await world.reputation(asker.id)).toBe(before);
  });
});
