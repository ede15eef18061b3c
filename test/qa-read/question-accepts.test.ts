import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userActivityRepository } from '../../shared/db/repositories/user-activity.js';
import { rows } from '../../shared/db/repositories/rows.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addQuestion, addUser, at } from './fixtures.js';

/**
 * A question carries its accepted answer and the time it was accepted (migration 0037), so that a user's timeline
 * reads the accepts on their questions from one index. Every way an answer's acceptance changes keeps the two columns
 * equal to what the answers say, and the timeline's accepts come out in (time, answer id) order at any page size.
 */
describe("questions' accepted answer and the timeline's accepts", () => {
  let runtime: TestRuntime;
  const db = () => runtime.database.db;

  /** Questions whose columns disagree with their answers (none, when the trigger did its work). */
  const disagreeing = async () =>
    rows<{ id: number }>(
      db(),
      sql`SELECT q.id FROM questions q LEFT JOIN answers a ON a.question_id = q.id AND a.is_accepted
          WHERE (q.has_accepted, q.accepted_answer_id, q.accepted_at) IS DISTINCT FROM (a.id IS NOT NULL, a.id, a.accepted_at)`,
    );
  const columnsOf = async (questionId: number) => {
    const [row] = await rows<{ accepted_answer_id: number | null; accepted_at: string | null }>(
      db(),
      sql`SELECT accepted_answer_id, accepted_at::text FROM questions WHERE id = ${questionId}`,
    );
    return row!;
  };

  beforeAll(async () => {
    runtime = await createTestRuntime({});
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it('follows an accept, a move of the accept, an unaccept, a deletion and an accepted insert', async () => {
    const asker = await addUser(db());
    const answerer = await addUser(db());
    const question = await addQuestion(db(), { authorId: asker.id });
    const first = await addAnswer(db(), { questionId: question.id, authorId: answerer.id });
    const second = await addAnswer(db(), { questionId: question.id, authorId: answerer.id });
    expect(await columnsOf(question.id)).toEqual({ accepted_answer_id: null, accepted_at: null });

    await db().execute(sql`UPDATE answers SET is_accepted = true WHERE id = ${first.id}`);
    const accepted = await columnsOf(question.id);
    expect(accepted.accepted_answer_id).toBe(first.id);
    expect(accepted.accepted_at).not.toBeNull();
    expect(await disagreeing()).toEqual([]);

    // The accept moves as the API moves it: the old one cleared, then the new one set, in one transaction.
    await db().transaction(async (tx) => {
      await tx.execute(sql`UPDATE answers SET is_accepted = false WHERE id = ${first.id}`);
      await tx.execute(sql`UPDATE answers SET is_accepted = true WHERE id = ${second.id}`);
    });
    expect((await columnsOf(question.id)).accepted_answer_id).toBe(second.id);
    expect(await disagreeing()).toEqual([]);

    await db().execute(sql`UPDATE answers SET is_accepted = false WHERE id = ${second.id}`);
    expect(await columnsOf(question.id)).toEqual({ accepted_answer_id: null, accepted_at: null });

    await db().execute(sql`UPDATE answers SET is_accepted = true WHERE id = ${second.id}`);
    await db().execute(sql`DELETE FROM answers WHERE id = ${second.id}`);
    expect(await columnsOf(question.id)).toEqual({ accepted_answer_id: null, accepted_at: null });

    const inserted = await addAnswer(db(), {
      questionId: question.id,
      authorId: answerer.id,
      isAccepted: true,
      acceptedAt: at(90),
    });
    expect(await columnsOf(question.id)).toEqual({
      accepted_answer_id: inserted.id,
      accepted_at: (
        await rows<{ t: string }>(db(), sql`SELECT ${at(90).toISOString()}::timestamptz::text AS t`)
      )[0]!.t,
    });
    expect(await disagreeing()).toEqual([]);
  });

  it('lists the accepts on a user’s questions newest first, ties by answer id, with no gap or duplicate at any page size', async () => {
    const asker = await addUser(db());
    const answerer = await addUser(db());
    // 24 accepted questions; the accept times repeat in threes, so that the cursor must place ties by answer id.
    for (let i = 0; i < 24; i++) {
      const question = await addQuestion(db(), { authorId: asker.id, createdAt: at(i) });
      const answer = await addAnswer(db(), {
        questionId: question.id,
        authorId: answerer.id,
        createdAt: at(i),
      });
      await db().execute(sql`UPDATE answers SET is_accepted = true WHERE id = ${answer.id}`);
      // Accepting stamps the time of the transaction; the time set afterwards is followed as well.
      await db().execute(
        sql`UPDATE answers SET accepted_at = ${at(1000 + Math.floor(i / 3)).toISOString()}::timestamptz WHERE id = ${answer.id}`,
      );
    }
    // An unaccepted question of the same user is not an accept.
    const open = await addQuestion(db(), { authorId: asker.id, createdAt: at(500) });
    await addAnswer(db(), { questionId: open.id, authorId: answerer.id, createdAt: at(501) });
    expect(await disagreeing()).toEqual([]);

    const expected = (
      await rows<{ id: number }>(
        db(),
        sql`SELECT a.id FROM answers a JOIN questions q ON q.id = a.question_id
            WHERE q.author_id = ${asker.id} AND a.is_accepted ORDER BY a.accepted_at DESC, a.id DESC`,
      )
    ).map((r) => r.id);
    expect(expected).toHaveLength(24);

    const activity = userActivityRepository(db());
    for (const limit of [1, 4, 7, 100]) {
      const accepts: number[] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 200; guard++) {
        const page = await activity.timeline(asker.id, { limit, ...(cursor && { cursor }) });
        accepts.push(...page.events.filter((e) => e.type === 'accepted').map((e) => e.id));
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
      expect(accepts, `limit ${limit}`).toEqual(expected);
    }
  });
});
