import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addComment, addQuestion, addTag, addUser, at, readerOf } from '../qa-read/fixtures.js';

/** Issue 19's reads over one small site whose every order and count is known. */
describe('issue 19 reads: vectors, per-user activity, tags, windows, comments, info', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const id: Record<string, number> = {};

  const { ok, bad } = readerOf(() => app);
  const ids = (list: { id: number }[]) => list.map((x) => x.id);
  const $ = (...names: string[]) => names.map((n) => id[n]!);

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    for (const [name, reputation, minute] of [
      ['alice', 50, 0],
      ['bob', 20, 1],
      ['carol', 90, 2],
    ] as const) {
      id[name] = (await addUser(db, { username: name, reputation, createdAt: at(minute) })).id;
    }
    for (const name of ['ipa', 'stout', 'lager']) id[name] = (await addTag(db, name)).id;
    const questions = [
      ['q1', 'alice', 1, ['ipa', 'stout'], 5, 10],
      ['q2', 'alice', 2, ['ipa'], 1, 50],
      ['q3', 'bob', 3, ['ipa', 'stout'], 3, 0],
      ['q4', 'bob', 4, ['stout', 'lager'], 0, 0],
      ['q5', 'carol', 5, [], 2, 0],
      ['q6', 'carol', 6, ['lager'], 0, 0],
    ] as const;
    for (const [name, author, minute, tags, votes, views] of questions) {
      const q = await addQuestion(db, {
        authorId: id[author]!,
        createdAt: at(minute),
        votes,
        views,
        slug: `slug-${name}`,
        tagIds: tags.map((t) => id[t]!),
      });
      id[name] = q.id;
    }
    const answers = [
      ['a1', 'q1', 'bob', 10, 4, true],
      ['a2', 'q1', 'carol', 11, 1, false],
      ['a3', 'q3', 'carol', 12, 6, false],
      ['a4', 'q2', 'bob', 13, -1, false],
    ] as const;
    for (const [name, question, author, minute, votes, isAccepted] of answers) {
      const a = await addAnswer(db, {
        questionId: id[question]!,
        authorId: id[author]!,
        createdAt: at(minute),
        votes,
        isAccepted,
      });
      id[name] = a.id;
    }
    // Posted now: the month's top answerers and today's activity.
    id.a5 = (await addAnswer(db, { questionId: id.q4!, authorId: id.alice! })).id;
    // Accepted later: the accept time is set by the database (bob accepts on his question).
    await db.execute(sql`UPDATE answers SET is_accepted = true WHERE id = ${id.a3!}`);
    const comments = [
      ['c1', { questionId: id.q1! }, 'carol', 20, 0],
      ['c2', { answerId: id.a1! }, 'alice', 21, 2],
      ['c3', { questionId: id.q1! }, 'bob', 22, 0],
      ['c4', { answerId: id.a3! }, 'bob', 23, 1],
    ] as const;
    for (const [name, post, author, minute, votes] of comments) {
      id[name] = (await addComment(db, { ...post, authorId: id[author]!, createdAt: at(minute), votes })).id;
    }
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  describe('several ids in one call', () => {
    it('answers data.questions in the order asked, unknown ids left out; one id or a slug keeps its shape', async () => {
      const data = await ok(`/api/questions/${id.q3};${id.q1};999999;${id.q3}`);
      expect(Object.keys(data)).toEqual(['questions']);
      expect(ids(data.questions)).toEqual($('q3', 'q1'));
      expect(data.questions[0].tags).toEqual(['ipa', 'stout']);
      expect((await ok(`/api/questions/${id.q1}`)).id).toBe(id.q1);
      expect((await ok('/api/questions/slug-q2')).id).toBe(id.q2);
    });

    it('answers data.users and data.answers the same way; GET /answers/{id} is one answer with its question', async () => {
      expect(ids((await ok(`/api/users/${id.bob};${id.alice}`)).users)).toEqual($('bob', 'alice'));
      expect((await ok(`/api/users/${id.carol}`)).username).toBe('carol');
      const answer = await ok(`/api/answers/${id.a1}`);
      expect(answer).toMatchObject({
        id: id.a1,
        question_id: id.q1,
        question_slug: 'slug-q1',
        is_accepted: true,
      });
      expect(answer.author).toEqual({ id: id.bob, username: 'bob' });
      expect(ids((await ok(`/api/answers/${id.a3};424242;${id.a1}`)).answers)).toEqual($('a3', 'a1'));
      expect((await ok('/api/answers/424242;424243')).answers).toEqual([]);
    });

    it('refuses more than 100 ids and bad ids with a 400, and an unknown single id with a 404', async () => {
      const many = Array.from({ length: 101 }, (_, i) => i + 1).join(';');
      expect(await bad(`/api/questions/${many}`)).toMatch(/100/);
      expect(await bad(`/api/users/${many}`)).toMatch(/100/);
      expect(await bad(`/api/answers/${many}`)).toMatch(/100/);
      expect(
        (await ok(`/api/answers/${many.split(';').slice(0, 100).join(';')}`)).answers.length,
      ).toBeGreaterThan(0);
      await bad(`/api/questions/1;0`);
      await bad(`/api/questions/1;2147483648`);
      await bad(`/api/questions/1;;2`);
      await bad(`/api/questions/1;abc`);
      await bad(`/api/users/1;abc`);
      await bad(`/api/answers/1;`);
      await bad(`/api/answers/abc`);
      await bad('/api/answers/999999', 404);
      await bad('/api/answers/2147483648', 404);
      // Zero names no id at all: a 400 on every single-item route, as on /users/0.
      await bad('/api/answers/0');
      await bad('/api/users/0');
      await bad('/api/users/999999', 404);
    });
  });

  describe("a user's activity", () => {
    it("lists a user's questions with the sorts, order and totals of /questions", async () => {
      const data = await ok(`/api/users/${id.bob}/questions`);
      expect(ids(data.questions)).toEqual($('q4', 'q3'));
      expect(data.pagination).toMatchObject({ total_items: 2, total_pages: 1, next_cursor: null });
      expect(ids((await ok(`/api/users/${id.bob}/questions?sort=votes`)).questions)).toEqual($('q3', 'q4'));
      expect(ids((await ok(`/api/users/${id.bob}/questions?order=asc`)).questions)).toEqual($('q3', 'q4'));
      expect(ids((await ok(`/api/users/${id.alice}/questions?sort=views`)).questions)).toEqual($('q2', 'q1'));
      expect(ids((await ok(`/api/users/${id.bob}/questions?tag=lager`)).questions)).toEqual($('q4'));
      const page = await ok(`/api/users/${id.alice}/questions?limit=1`);
      expect(ids(page.questions)).toEqual($('q2'));
      const next = await ok(`/api/users/${id.alice}/questions?limit=1&cursor=${page.pagination.next_cursor}`);
      expect(ids(next.questions)).toEqual($('q1'));
      await bad('/api/users/999999/questions', 404);
      await bad('/api/users/abc/questions');
      await bad(`/api/users/${id.bob}/questions?sort=bogus`);
    });

    it("lists a user's answers (newest, votes, oldest) with their questions", async () => {
      const data = await ok(`/api/users/${id.bob}/answers`);
      expect(ids(data.answers)).toEqual($('a4', 'a1'));
      expect(data.answers[1]).toMatchObject({ question_id: id.q1, question_title: expect.any(String) });
      expect(data.pagination.total_items).toBe(2);
      expect(ids((await ok(`/api/users/${id.bob}/answers?sort=votes`)).answers)).toEqual($('a1', 'a4'));
      expect(ids((await ok(`/api/users/${id.bob}/answers?sort=oldest`)).answers)).toEqual($('a1', 'a4'));
      expect(ids((await ok(`/api/users/${id.carol}/answers?sort=votes&order=asc`)).answers)).toEqual(
        $('a2', 'a3'),
      );
      await bad('/api/users/999999/answers', 404);
    });

    it("lists a user's comments, newest first, with their posts and an exact total", async () => {
      const data = await ok(`/api/users/${id.bob}/comments`);
      expect(ids(data.comments)).toEqual($('c4', 'c3'));
      expect(data.comments[0]).toMatchObject({ post_type: 'answer', post_id: id.a3, question_id: id.q3 });
      expect(data.comments[1]).toMatchObject({ post_type: 'question', post_id: id.q1, question_id: id.q1 });
      expect(data.pagination.total_items).toBe(2);
    });

    it("gives a user's tags by answer score, then count, then tag id", async () => {
      const { tags } = await ok(`/api/users/${id.carol}/tags`);
      expect(tags).toEqual([
        { name: 'ipa', slug: 'ipa', answer_score: 7, answer_count: 2, question_score: 0, question_count: 0 },
        {
          name: 'stout',
          slug: 'stout',
          answer_score: 7,
          answer_count: 2,
          question_score: 0,
          question_count: 0,
        },
        {
          name: 'lager',
          slug: 'lager',
          answer_score: 0,
          answer_count: 0,
          question_score: 0,
          question_count: 1,
        },
      ]);
      const bob = (await ok(`/api/users/${id.bob}/tags?sort=count&limit=2`)).tags;
      expect(bob.map((t: { name: string }) => t.name)).toEqual(['ipa', 'stout']);
      expect(bob[0]).toMatchObject({
        answer_score: 3,
        answer_count: 2,
        question_score: 3,
        question_count: 1,
      });
    });

    it("walks a user's timeline newest first with cursors, accepts included", async () => {
      const seen: { type: string; id: number }[] = [];
      let cursor: string | null = null;
      do {
        const data: { events: { type: string; id: number }[]; next_cursor: string | null } = await ok(
          `/api/users/${id.bob}/timeline?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(data.events.length).toBeLessThanOrEqual(3);
        seen.push(...data.events.map((e) => ({ type: e.type, id: e.id })));
        cursor = data.next_cursor;
      } while (cursor);
      expect(seen).toEqual([
        { type: 'accepted', id: id.a3 },
        { type: 'comment', id: id.c4 },
        { type: 'comment', id: id.c3 },
        { type: 'answer', id: id.a4 },
        { type: 'answer', id: id.a1 },
        { type: 'question', id: id.q4 },
        { type: 'question', id: id.q3 },
      ]);
      const alice = await ok(`/api/users/${id.alice}/timeline`);
      expect(alice.events[0]).toMatchObject({ type: 'answer', id: id.a5, question_id: id.q4 });
      expect(alice.events.find((e: { type: string }) => e.type === 'accepted')).toMatchObject({
        id: id.a1,
        question_id: id.q1,
        question_slug: 'slug-q1',
        created_at: at(10).toISOString(),
      });
      await bad(`/api/users/${id.bob}/timeline?limit=101`);
      await bad(`/api/users/${id.bob}/tags?sort=bogus`);
      await bad(`/api/users/${id.bob}/tags?limit=0`);
      await bad('/api/users/999999/tags', 404);
      await bad('/api/users/999999/comments', 404);
      await bad('/api/users/999999/timeline', 404);
      await bad(`/api/users/${id.bob}/timeline?cursor=abc`);
    });
  });

  describe('tags', () => {
    it('gives one tag with its counts, its related tags and its top answerers', async () => {
      expect(await ok('/api/tags/lager')).toMatchObject({
        id: id.lager,
        name: 'lager',
        description: 'About lager',
        questions_count: 2,
        unanswered_count: 1,
      });
      await bad('/api/tags/no-such-tag', 404);
      expect((await ok('/api/tags/stout/related')).related).toEqual([
        { id: id.ipa, name: 'ipa', slug: 'ipa', questions_count: 3, together: 2 },
        { id: id.lager, name: 'lager', slug: 'lager', questions_count: 2, together: 1 },
      ]);
      expect((await ok('/api/tags/stout/related?limit=1')).related).toHaveLength(1);
      const top = (await ok('/api/tags/ipa/top-answerers')).top_answerers;
      expect(top.map((t: { user: { id: number } }) => t.user.id)).toEqual($('carol', 'bob'));
      expect(top[0]).toMatchObject({ answer_score: 7, answer_count: 2 });
      expect((await ok('/api/tags/ipa/top-answerers?period=month')).top_answerers).toEqual([]);
      const month = (await ok('/api/tags/stout/top-answerers?period=month')).top_answerers;
      expect(month.map((t: { user: { id: number } }) => t.user.id)).toEqual($('alice'));
      await bad('/api/tags/ipa/top-answerers?period=year');
      await bad('/api/tags/nope/related', 404);
      await bad('/api/tags/ipa/related?limit=0');
      await bad('/api/tags/nope/top-answerers', 404);
    });

    it('filters /questions by several tags, all of which must match, in every sort', async () => {
      const data = await ok('/api/questions?tag=ipa;stout');
      expect(ids(data.questions)).toEqual($('q3', 'q1'));
      expect(data.pagination).toMatchObject({ total_items: 2, total_pages: 1, next_cursor: null });
      expect(ids((await ok('/api/questions?tag=stout;ipa&sort=votes')).questions)).toEqual($('q1', 'q3'));
      expect(ids((await ok('/api/questions?tag=stout;lager')).questions)).toEqual($('q4'));
      expect(ids((await ok('/api/questions?tag=ipa;stout&order=asc')).questions)).toEqual($('q1', 'q3'));
      const first = await ok('/api/questions?tag=ipa;stout&limit=1');
      expect(ids(first.questions)).toEqual($('q3'));
      const second = await ok(`/api/questions?tag=ipa;stout&limit=1&cursor=${first.pagination.next_cursor}`);
      expect(ids(second.questions)).toEqual($('q1'));
      expect(second.pagination.next_cursor).toBeNull();
      expect((await ok('/api/questions?tag=ipa;nope')).questions).toEqual([]);
      await bad('/api/questions?tag=ipa;;stout');
      await bad('/api/questions?tag=a;b;c;d;e;f');
    });
  });

  describe('windows and order', () => {
    it('filters by creation date (ISO 8601 or Unix seconds) and orders either way', async () => {
      const from = at(2).toISOString();
      const to = at(4).getTime() / 1000;
      const data = await ok(`/api/questions?fromdate=${from}&todate=${to}`);
      expect(ids(data.questions)).toEqual($('q4', 'q3', 'q2'));
      expect(data.pagination.total_items).toBe(3);
      expect(ids((await ok(`/api/questions?fromdate=${from}&todate=${to}&order=asc`)).questions)).toEqual(
        $('q2', 'q3', 'q4'),
      );
      expect(
        ids((await ok('/api/questions?fromdate=2024-01-01&todate=2024-01-01T00:01:00Z')).questions),
      ).toEqual($('q1'));
      // An offset's + sent unencoded arrives as a space: still the offset.
      expect(
        ids((await ok('/api/questions?fromdate=2024-01-01&todate=2024-01-01T02:01:00+02:00')).questions),
      ).toEqual($('q1'));
      expect(ids((await ok('/api/questions?order=asc&limit=2')).questions)).toEqual($('q1', 'q2'));
      // The last page of a reversed list is read from the index's other end: same rows, same order.
      expect(ids((await ok('/api/questions?order=asc&limit=4&page=2')).questions)).toEqual($('q5', 'q6'));
      expect(ids((await ok('/api/questions?sort=votes&order=asc&limit=4&page=2')).questions)).toEqual(
        $('q3', 'q1'),
      );
    });

    it('bounds the sort key with min and max (votes, views, dates, reputation)', async () => {
      expect(ids((await ok('/api/questions?sort=votes&min=2&max=5')).questions)).toEqual($('q1', 'q3', 'q5'));
      expect(ids((await ok('/api/questions?sort=views&min=10')).questions)).toEqual($('q2', 'q1'));
      expect(ids((await ok(`/api/questions?min=${at(5).toISOString()}`)).questions)).toEqual($('q6', 'q5'));
      expect(ids((await ok('/api/users?sort=reputation&max=60')).users)).toEqual($('alice', 'bob'));
      expect(ids((await ok('/api/users?sort=name&min=B&max=c')).users)).toEqual($('bob'));
      expect(
        ids((await ok(`/api/users?sort=newest&order=asc&fromdate=${at(1).toISOString()}`)).users),
      ).toEqual($('bob', 'carol'));
      expect(ids((await ok(`/api/users/${id.bob}/answers?sort=votes&min=0`)).answers)).toEqual($('a1'));
      expect(ids((await ok('/api/comments?sort=votes&min=1')).comments)).toEqual($('c2', 'c4'));
    });

    it("windows a question's answers: dates, min/max on the sort's key, and order reversing the whole order", async () => {
      // q1's answers: a1 (accepted, 4 votes, minute 10), a2 (1 vote, minute 11).
      const of = async (query: string) => ids((await ok(`/api/questions/${id.q1}/answers?${query}`)).answers);
      expect(await of('')).toEqual($('a1', 'a2'));
      // The accepted answer first is part of the votes order: order=asc reads it backwards, accepted last.
      expect(await of('order=asc')).toEqual($('a2', 'a1'));
      expect(await of('order=desc')).toEqual($('a1', 'a2'));
      expect(await of(`fromdate=${at(11).toISOString()}`)).toEqual($('a2'));
      expect(await of(`todate=${at(10).getTime() / 1000}`)).toEqual($('a1'));
      expect(await of('min=2')).toEqual($('a1'));
      expect(await of('max=1')).toEqual($('a2'));
      expect(await of('sort=newest')).toEqual($('a2', 'a1'));
      expect(await of('sort=newest&order=asc')).toEqual($('a1', 'a2'));
      expect(await of('sort=oldest&order=desc')).toEqual($('a2', 'a1'));
      expect(await of(`sort=oldest&min=${at(11).toISOString()}`)).toEqual($('a2'));
      expect(await of('fromdate=2030-01-01')).toEqual([]);
      expect(ids((await ok(`/api/questions/slug-q1/answers?sort=votes&order=asc&max=4`)).answers)).toEqual(
        $('a2', 'a1'),
      );
      for (const query of [
        'fromdate=yesterday',
        'todate=2024-02-30',
        'min=abc',
        'max=1.5',
        'order=up',
        'order=',
      ]) {
        expect(await bad(`/api/questions/${id.q1}/answers?${query}`)).not.toMatch(/internal/i);
      }
      // On a date sort, min and max are dates.
      await bad(`/api/questions/${id.q1}/answers?sort=newest&min=notadate`);
    });

    it('lists every answer of the site (GET /answers) with the sorts, windows, cursors and totals of the other lists', async () => {
      const all = await ok('/api/answers');
      expect(ids(all.answers)).toEqual($('a5', 'a4', 'a3', 'a2', 'a1'));
      expect(all.answers[0]).toMatchObject({
        question_id: id.q4,
        author: { id: id.alice, username: 'alice' },
      });
      expect(all.pagination).toMatchObject({
        total_items: 5,
        total_pages: 1,
        has_more: false,
        next_cursor: null,
      });
      expect(ids((await ok('/api/answers?sort=oldest&limit=2')).answers)).toEqual($('a1', 'a2'));
      expect(ids((await ok('/api/answers?sort=votes')).answers)).toEqual($('a3', 'a1', 'a2', 'a5', 'a4'));
      expect(ids((await ok('/api/answers?sort=votes&order=asc&min=0')).answers)).toEqual(
        $('a5', 'a2', 'a1', 'a3'),
      );
      const windowed = await ok(
        `/api/answers?fromdate=${at(11).toISOString()}&todate=${at(13).toISOString()}`,
      );
      expect(ids(windowed.answers)).toEqual($('a4', 'a3', 'a2'));
      expect(windowed.pagination.total_items).toBe(3);
      expect(ids((await ok(`/api/answers?order=asc&max=${at(11).toISOString()}`)).answers)).toEqual(
        $('a1', 'a2'),
      );
      // A walk by cursor in either direction: every answer once.
      for (const order of ['asc', 'desc']) {
        const seen: number[] = [];
        let url = `/api/answers?sort=votes&order=${order}&limit=2`;
        for (;;) {
          const data = await ok(url);
          seen.push(...ids(data.answers));
          if (!data.pagination.has_more) break;
          url = `/api/answers?sort=votes&order=${order}&limit=2&cursor=${data.pagination.next_cursor}`;
        }
        const byVotes = $('a3', 'a1', 'a2', 'a5', 'a4');
        expect(seen).toEqual(order === 'desc' ? byVotes : byVotes.reverse());
      }
      const first = await ok('/api/answers?limit=1');
      await bad(`/api/answers?limit=1&sort=oldest&cursor=${first.pagination.next_cursor}`);
      // A user's answers' cursor is not the site's.
      const bobs = await ok(`/api/users/${id.bob}/answers?limit=1`);
      await bad(`/api/answers?limit=1&cursor=${bobs.pagination.next_cursor}`);
      for (const query of [
        'sort=bogus',
        'limit=0',
        'page=0',
        'fromdate=2024-13-01',
        'sort=votes&min=abc',
        'sort=votes&max=99999999999',
        'min=notadate',
        'order=up',
        'cursor=bogus',
      ]) {
        expect(await bad(`/api/answers?${query}`)).not.toMatch(/internal/i);
      }
    });

    it('walks a windowed list with cursors in either order, no gap and no duplicate', async () => {
      for (const order of ['asc', 'desc']) {
        const seen: number[] = [];
        let url = `/api/questions?fromdate=${at(1).toISOString()}&order=${order}&limit=2`;
        for (;;) {
          const data = await ok(url);
          seen.push(...ids(data.questions));
          if (!data.pagination.next_cursor) break;
          url = `/api/questions?fromdate=${at(1).toISOString()}&order=${order}&limit=2&cursor=${data.pagination.next_cursor}`;
        }
        const all = $('q1', 'q2', 'q3', 'q4', 'q5', 'q6');
        expect(seen).toEqual(order === 'asc' ? all : all.reverse());
      }
      // A cursor belongs to its window and direction.
      const first = await ok('/api/questions?order=asc&limit=1');
      await bad(`/api/questions?order=desc&limit=1&cursor=${first.pagination.next_cursor}`);
    });

    it('refuses bad dates, bounds and orders with a 400', async () => {
      for (const query of [
        'fromdate=yesterday',
        'fromdate=2024-02-30',
        'todate=2024-13-01',
        'fromdate=2024-01-01T25:00:00Z',
        'fromdate=99999999999999',
        'sort=votes&min=abc',
        'sort=votes&max=1.5',
        'sort=votes&min=99999999999',
        'min=notadate',
        'order=up',
        'order=',
      ]) {
        expect(await bad(`/api/questions?${query}`)).not.toMatch(/internal/i);
      }
      await bad('/api/users?fromdate=x');
      await bad('/api/comments?todate=2024-02-30');
    });
  });

  describe('comments', () => {
    it('lists every comment newest first, and the comments of a question or an answer oldest first', async () => {
      const all = await ok('/api/comments');
      expect(ids(all.comments)).toEqual($('c4', 'c3', 'c2', 'c1'));
      expect(all.pagination).toMatchObject({ total_items: 4, total_pages: 1, next_cursor: null });
      expect(ids((await ok('/api/comments?sort=oldest&limit=2')).comments)).toEqual($('c1', 'c2'));
      expect((await ok('/api/comments?limit=3&page=2')).comments.map((c: { id: number }) => c.id)).toEqual(
        $('c1'),
      );
      const onQuestion = await ok(`/api/questions/${id.q1}/comments`);
      expect(ids(onQuestion.comments)).toEqual($('c1', 'c3'));
      expect(onQuestion.pagination.total_items).toBe(2);
      expect(ids((await ok('/api/questions/slug-q1/comments?sort=newest')).comments)).toEqual($('c3', 'c1'));
      expect(ids((await ok(`/api/answers/${id.a1}/comments`)).comments)).toEqual($('c2'));
      await bad('/api/answers/999999/comments', 404);
      await bad('/api/questions/no-such-question/comments', 404);
      await bad('/api/comments?sort=bogus');
      await bad('/api/comments?limit=101');
    });
  });

  describe('site info', () => {
    it('gives totals from counters, 30 days of activity and the newest question and answer', async () => {
      const data = await ok('/api/info');
      expect(data.totals).toEqual({
        questions: 6,
        answers: 5,
        comments: 4,
        users: 3,
        unanswered: 2,
        accepted_rate: 0.3333,
      });
      expect(data.activity).toHaveLength(30);
      const today = new Date().toISOString().slice(0, 10);
      expect(data.activity.at(-1)).toEqual({ date: today, questions: 0, answers: 1, comments: 0 });
      expect(data.newest_question.id).toBe(id.q6);
      expect(data.newest_answer).toMatchObject({ id: id.a5, question_id: id.q4 });
    });
  });

  describe('HTTP behaviour of the new routes', () => {
    it('sets the accept time when an answer is accepted and clears it when unaccepted', async () => {
      const db = runtime.database.db;
      const read = async () =>
        (
          (await db.execute(sql`SELECT accepted_at FROM answers WHERE id = ${id.a4!}`)) as unknown as {
            accepted_at: unknown;
          }[]
        )[0]!.accepted_at;
      expect(await read()).toBeNull();
      await db.execute(sql`UPDATE answers SET is_accepted = true WHERE id = ${id.a4!}`);
      expect(await read()).not.toBeNull();
      await db.execute(sql`UPDATE answers SET is_accepted = false WHERE id = ${id.a4!}`);
      expect(await read()).toBeNull();
    });

    it('answers 304 to a matching ETag and serves public reads from the cache', async () => {
      const vectors = [
        `/api/questions/${id.q1};${id.q2}`,
        `/api/users/${id.bob};${id.alice}`,
        `/api/answers/${id.a3};${id.a1}`,
      ];
      for (const url of [
        '/api/info',
        `/api/answers/${id.a1}`,
        '/api/comments',
        '/api/tags/ipa',
        ...vectors,
      ]) {
        // The previous test's writes notify agora_changes at commit; a notification that arrives between the two
        // requests rightly empties the cache, so the pair is retried until no invalidation falls between them.
        await vi.waitFor(
          async () => {
            const first = await app.inject(url);
            expect(first.headers.etag).toBeDefined();
            const again = await app.inject({
              url,
              headers: { 'if-none-match': first.headers.etag as string },
            });
            expect(again.statusCode).toBe(304);
            expect(again.headers['x-cache']).toBe('hit');
          },
          { timeout: 10_000, interval: 50 },
        );
      }
      // One question stays outside the cache: each read counts a view, which a cached answer would skip.
      const single = await app.inject(`/api/questions/${id.q1}`);
      expect(single.statusCode).toBe(200);
      expect(single.headers['x-cache']).toBeUndefined();
    });

    it('empties a cached vector of questions on a write (its NOTIFY at commit)', async () => {
      const url = `/api/questions/${id.q2};${id.q1}`;
      await vi.waitFor(
        async () => {
          await app.inject(url);
          expect((await app.inject(url)).headers['x-cache']).toBe('hit');
        },
        { timeout: 10_000, interval: 50 },
      );
      await runtime.database.db.execute(sql`UPDATE questions SET title = 'Retitled' WHERE id = ${id.q1!}`);
      // Another process's write (here: SQL) reaches the cache by its NOTIFY at commit.
      await vi.waitFor(
        async () => {
          const titles = (await ok(url)).questions.map((q: { title: string }) => q.title);
          expect(titles[1]).toBe('Retitled');
        },
        { timeout: 10_000, interval: 50 },
      );
    });

    it('keeps the totals exact after deletes (counters kept by the writing transaction)', async () => {
      await runtime.database.db.execute(sql`DELETE FROM comments WHERE id = ${id.c4!}`);
      await runtime.database.db.execute(sql`DELETE FROM answers WHERE id = ${id.a2!}`);
      expect((await ok('/api/comments')).pagination.total_items).toBe(3);
      expect((await ok(`/api/users/${id.bob}/comments`)).pagination.total_items).toBe(1);
      expect((await ok('/api/info')).totals).toMatchObject({ comments: 3, answers: 4 });
      // A bulk load's recount rebuilds the same figures.
      await runtime.database.db.execute(sql`SELECT agora_recount()`);
      expect((await ok('/api/info')).totals).toMatchObject({
        comments: 3,
        answers: 4,
        accepted_rate: 0.3333,
      });
      expect((await ok(`/api/users/${id.bob}/comments`)).pagination.total_items).toBe(1);
    });

    it('counts a filtered list up to 10,000 rows, says so, and walks past the bound by cursor', async () => {
      const db = runtime.database.db;
      const writer = (await addUser(db, { username: 'prolific' })).id;
      await db.execute(sql`INSERT INTO comments (question_id, author_id, content, created_at)
        SELECT ${id.q5!}, ${writer}, 'Comment ' || i, '2030-01-01'::timestamptz + i * interval '1 second'
        FROM generate_series(1, 10005) AS i`);
      const window = '/api/comments?fromdate=2030-01-01';
      const first = await ok(window);
      expect(first.pagination).toMatchObject({ total_items: 10_000, total_pages: 500, total_bounded: true });
      const last = await ok(`${window}&page=500`);
      expect(last.comments).toHaveLength(20);
      expect(last.pagination.next_cursor).toEqual(expect.any(String));
      expect((await ok(`${window}&page=501`)).comments).toEqual([]);
      const past = await ok(`${window}&cursor=${last.pagination.next_cursor}`);
      expect(past.comments.map((c: { content: string }) => c.content)).toEqual(
        [5, 4, 3, 2, 1].map((i) => `Comment ${i}`),
      );
      expect(past.pagination.next_cursor).toBeNull();
      // The user's list has its own counter: exact, not bounded.
      const own = await ok(`/api/users/${writer}/comments`);
      expect(own.pagination.total_items).toBe(10_005);
      expect(own.pagination.total_bounded).toBeUndefined();
      expect((await ok('/api/info')).totals.comments).toBe(10_008);
      // 10,005 rows through the comment triggers (counters, change feed, search vectors) take a while on 2 cores.
    }, 120_000);
  });
});
