import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { voteEffect, REPUTATION, type PostKind, type VoteValue } from '../../shared/qa/reputation.js';
import { ANSWER, questionBody, writeWorld, type Writer } from './helpers.js';

/**
 * Many voters at once, through the HTTP API: afterwards every counter must equal a recount from the rows, and
 * every user's reputation must equal 1 + what the standing votes and acceptances are worth.
 */
describe('counters and reputation under concurrent writes', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let authors: Writer[];
  let voters: Writer[];
  const posts: Array<{ kind: PostKind; id: number }> = [];
  let questionId: number;

  beforeAll(async () => {
    world = await writeWorld();
    authors = [await world.writer('author0'), await world.writer('author1'), await world.writer('author2')];
    voters = [];
    for (let i = 0; i < 24; i++) voters.push(await world.writer(`voter${i}`));
    const asked = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: authors[0]!.auth,
      payload: questionBody(),
    });
    questionId = asked.json().data.id;
    posts.push({ kind: 'question', id: questionId });
    for (const author of authors.slice(1)) {
      const res = await world.app.inject({
        method: 'POST',
        url: `/api/questions/${questionId}/answers`,
        headers: author.auth,
        payload: { content: ANSWER },
      });
      posts.push({ kind: 'answer', id: res.json().data.id });
    }
    // Authors vote too, so some users are both voters and authors in the same burst.
    voters.push(...authors);
  });
  afterAll(() => world.close());

  // A deterministic pseudo-random sequence, so a failure can be replayed.
  let seed = 42;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };

  async function recount() {
    const db = world.runtime.database;
    const votes = await db.query<{
      user_id: number;
      question_id: number | null;
      answer_id: number | null;
      value: VoteValue;
    }>(sql`SELECT user_id, question_id, answer_id, value FROM votes`);
    const authorOf = new Map<string, number>();
    for (const row of await db.query<{ id: number; author_id: number }>(
      sql`SELECT id, author_id FROM questions`,
    ))
      authorOf.set(`q${row.id}`, row.author_id);
    for (const row of await db.query<{ id: number; author_id: number }>(
      sql`SELECT id, author_id FROM answers`,
    ))
      authorOf.set(`a${row.id}`, row.author_id);
    const expected = new Map<number, number>();
    const add = (user: number, delta: number) => expected.set(user, (expected.get(user) ?? 1) + delta);
    for (const v of votes) {
      const kind: PostKind = v.question_id !== null ? 'question' : 'answer';
      const author = authorOf.get(kind === 'question' ? `q${v.question_id}` : `a${v.answer_id}`)!;
      const effect = voteEffect(kind, v.value);
      add(author, effect.author);
      add(v.user_id, effect.voter);
    }
    const accepted = await db.query<{ answer_author: number; question_author: number }>(
      sql`SELECT a.author_id AS answer_author, q.author_id AS question_author FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.is_accepted`,
    );
    for (const a of accepted) {
      if (a.answer_author === a.question_author) continue;
      add(a.answer_author, REPUTATION.acceptedAnswer);
      add(a.question_author, REPUTATION.acceptedAnswerAccepter);
    }
    return expected;
  }

  async function snapshot() {
    const db = world.runtime.database;
    return {
      questions: await db.query(
        sql`SELECT id, votes, answers_count, has_accepted FROM questions ORDER BY id`,
      ),
      answers: await db.query(sql`SELECT id, votes, is_accepted FROM answers ORDER BY id`),
      users: await db.query<{ id: number; reputation: number }>(
        sql`SELECT id, reputation, questions_count, answers_count FROM users ORDER BY id`,
      ),
    };
  }

  it('loses no update when hundreds of votes, changes and removals race', async () => {
    const requests = [];
    for (let i = 0; i < 400; i++) {
      const voter = voters[random(voters.length)]!;
      const post = posts[random(posts.length)]!;
      const url = `/api/${post.kind}s/${post.id}/vote`;
      const choice = random(3);
      requests.push(
        choice === 2
          ? world.app.inject({ method: 'DELETE', url, headers: voter.auth })
          : world.app.inject({
              method: 'PUT',
              url,
              headers: voter.auth,
              payload: { value: choice === 0 ? 1 : -1 },
            }),
      );
    }
    // One voter hammering one post with opposite votes at once.
    for (let i = 0; i < 40; i++) {
      requests.push(
        world.app.inject({
          method: 'PUT',
          url: `/api/questions/${questionId}/vote`,
          headers: voters[0]!.auth,
          payload: { value: i % 2 ? 1 : -1 },
        }),
      );
    }
    // The asker switching the accepted answer back and forth meanwhile.
    for (let i = 0; i < 20; i++) {
      requests.push(
        world.app.inject({
          method: 'POST',
          url: `/api/answers/${posts[1 + (i % 2)]!.id}/accept`,
          headers: authors[0]!.auth,
        }),
      );
    }
    const results = await Promise.all(requests);
    const statuses = new Set(results.map((r) => r.statusCode));
    // 403 = an author voting on their own post; nothing else may fail.
    expect([...statuses].filter((s) => s !== 200 && s !== 403)).toEqual([]);
    expect(results.filter((r) => r.statusCode === 200).length).toBeGreaterThan(300);

    const db = world.runtime.database;
    const [votes] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM votes`);
    expect(votes!.n).toBeGreaterThan(10);
    const [accepted] = await db.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM answers WHERE is_accepted`,
    );
    expect(accepted!.n).toBe(1);

    // Counters: equal before and after recomputing every one of them from the rows.
    const before = await snapshot();
    await db.query(sql`SELECT agora_recount()`);
    expect(await snapshot()).toEqual(before);

    const expected = await recount();
    for (const user of before.users)
      expect({ user: user.id, reputation: user.reputation }).toEqual({
        user: user.id,
        reputation: expected.get(user.id) ?? 1,
      });
  });
});
