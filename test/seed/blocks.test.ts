import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBulk, type BulkSession } from '../../shared/db/bulk/session.js';
import { generateDemo } from '../../shared/demo/generate.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * The seed generates its questions in blocks (shared/demo/block.ts): on PostgreSQL on generator threads, written in
 * block order by COPY; on the embedded database one block after the other on the loading thread, by INSERT. Both
 * must give the same rows, with answer and comment ids running on across blocks and every slug unique.
 */
class Rollback extends Error {
  constructor(readonly digest: Record<string, unknown>) {
    super('rolled back on purpose');
  }
}

const DIGESTS: Record<string, string> = {
  questions:
    'id, slug, title, content, author_id, votes, views, answers_count, has_accepted, tag_names, created_at, search_vector',
  question_tags: 'question_id, tag_id, created_at, votes, views, answers_count',
  answers: 'id, question_id, author_id, content, votes, is_accepted, accepted_at, created_at, search_vector',
  comments: 'id, question_id, answer_id, author_id, content, votes, created_at',
  votes: 'user_id, question_id, answer_id, value, created_at',
  users: 'id, questions_count, answers_count',
};

async function digest(session: BulkSession): Promise<Record<string, unknown>> {
  const selects = Object.entries(DIGESTS).map(
    ([table, columns]) =>
      `(SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM (SELECT ${columns} FROM ${table}) t) AS ${table}`,
  );
  const [row] = await session.query(`SELECT ${selects.join(', ')},
    (SELECT count(*) = max(id) FROM answers) AS answer_ids_dense,
    (SELECT count(*) = max(id) FROM comments) AS comment_ids_dense,
    (SELECT count(DISTINCT slug) FROM questions)::int AS slugs,
    (SELECT count(*) FROM comments c WHERE c.answer_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.id = c.answer_id))::int AS orphan_comments,
    (SELECT count(*) FROM votes v WHERE v.answer_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.id = v.answer_id))::int AS orphan_votes`);
  return row!;
}

/** Generates the demo inside a bulk transaction, digests it, and rolls it all back. */
async function generated(runtime: TestRuntime, copy: boolean): Promise<Record<string, unknown>> {
  const failure = await runBulk(runtime.database, { triggersOff: true }, async (session) => {
    const counts = await generateDemo(copy ? session : { ...session, copy: undefined }, {
      questions: 300,
      blockQuestions: 40,
    });
    expect(counts.questions).toBe(300);
    throw new Rollback(await digest(session));
  }).catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(Rollback);
  return (failure as Rollback).digest;
}

describe('the seed in blocks', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it('gives the same rows on generator threads (COPY) as on the loading thread (INSERT), ids dense across blocks', async () => {
    const threads = await generated(runtime, true);
    expect(threads).toMatchObject({
      answer_ids_dense: true,
      comment_ids_dense: true,
      slugs: 300,
      orphan_comments: 0,
      orphan_votes: 0,
    });
    expect(await generated(runtime, false)).toEqual(threads);
  }, 180_000);
});
