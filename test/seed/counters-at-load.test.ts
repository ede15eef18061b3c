import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBulk, type BulkSession } from '../../shared/db/bulk/session.js';
import { syncSequences } from '../../shared/db/bulk/qa-tables.js';
import { generateDemo } from '../../shared/demo/generate.js';
import { BEER_DUMP_DIR } from '../../shared/datasets.js';
import { loadStaged } from '../../shared/stackexchange/load.js';
import { stageDump } from '../../shared/stackexchange/staging.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * Bulk loads write every maintained counter with the rows (post counts, acceptance, tags, votes, accepted_at,
 * users' totals, question_tags' sort keys): the closing agora_recount() must then rewrite no row, since an
 * UPDATE of a question or an answer recomputes its search vector and every index entry. Counted with the
 * transaction's own statistics (pg_stat_get_xact_tuples_updated), inside a load that is rolled back.
 */
const TABLES = ['questions', 'answers', 'users', 'question_tags'] as const;

class Rollback extends Error {
  constructor(readonly updates: Record<string, number>) {
    super('rolled back on purpose');
  }
}

async function updatesByRecount(session: BulkSession): Promise<Record<string, number>> {
  const count = async () => {
    const [row] = await session.query<Record<string, string>>(
      `SELECT ${TABLES.map((t) => `pg_stat_get_xact_tuples_updated('${t}'::regclass) AS ${t}`).join(', ')}`,
    );
    return row!;
  };
  const before = await count();
  await session.query('SELECT agora_recount()');
  const after = await count();
  return Object.fromEntries(TABLES.map((t) => [t, Number(after[t]) - Number(before[t])]));
}

/** Runs a load inside a bulk transaction, then the recount, and rolls it all back; returns the recount's updates. */
async function recountAfter(runtime: TestRuntime, load: (session: BulkSession) => Promise<void>) {
  const failure = await runBulk(runtime.database, { triggersOff: true }, async (session) => {
    await load(session);
    throw new Rollback(await updatesByRecount(session));
  }).catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(Rollback);
  return (failure as Rollback).updates;
}

describe('bulk loads write the counters a recount would compute', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it('the seed: the recount after it rewrites no question, answer, user or question_tags row', async () => {
    const updates = await recountAfter(runtime, async (session) => {
      const counts = await generateDemo(session, { questions: 400 });
      expect(counts.answers).toBeGreaterThan(0);
    });
    expect(updates).toEqual({ questions: 0, answers: 0, users: 0, question_tags: 0 });
  }, 180_000);

  it('the Stack Exchange import: the recount after it rewrites no question, answer or question_tags row', async () => {
    const updates = await recountAfter(runtime, async (session) => {
      await stageDump(session, BEER_DUMP_DIR);
      const loaded = await loadStaged(session, () => syncSequences(session));
      expect(loaded.questions).toBeGreaterThan(0);
    });
    // Users: only the placeholders for deleted owners get their totals from the recount (a handful of rows).
    const { users, ...posts } = updates;
    expect(posts).toEqual({ questions: 0, answers: 0, question_tags: 0 });
    expect(users).toBeLessThan(50);
  }, 180_000);
});
