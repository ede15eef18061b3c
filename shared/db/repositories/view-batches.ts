import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { MAX_INT4 } from '../int4.js';
import { rows } from './rows.js';

// Recorded batch ids are only needed while their Redis key may still exist; a day is far beyond any retry.
const KEEP_BATCH_IDS = sql`interval '1 day'`;
const LOCK_TIMEOUT = '5s';

/**
 * Adds one batch of view counts to questions.views in one transaction, unless the batch id was recorded before
 * (view_batches' primary key): the exactly-once step of shared/qa/views.ts. `counts` are [question id, views]
 * pairs of valid ids, sorted by id. True when applied now.
 */
export async function applyViewBatch(
  db: Db,
  batchId: string,
  counts: readonly (readonly [number, number])[],
): Promise<boolean> {
  const ids = `{${counts.map(([id]) => id).join(',')}}`;
  const ns = `{${counts.map(([, n]) => Math.min(n, MAX_INT4)).join(',')}}`;
  return db.transaction(async (tx) => {
    // A lock held elsewhere fails this attempt instead of stalling the worker; the batch stays for the retry.
    await tx.execute(sql`SELECT set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`);
    const recorded = await rows<{ id: string }>(
      tx,
      sql`INSERT INTO view_batches (id) VALUES (${batchId}) ON CONFLICT DO NOTHING RETURNING id`,
    );
    if (recorded.length === 0) return false;
    if (counts.length > 0) {
      // Rows are locked in id order first so that two flushers never deadlock on the same questions.
      await tx.execute(sql`SELECT id FROM questions WHERE id = ANY(${ids}::int[]) ORDER BY id FOR UPDATE`);
      // Saturating at the int4 maximum: an overflow must not turn a batch into one that fails forever.
      await tx.execute(sql`UPDATE questions q SET views = least(q.views::bigint + v.n, ${MAX_INT4})::int
                           FROM unnest(${ids}::int[], ${ns}::int[]) AS v(id, n) WHERE q.id = v.id`);
    }
    await tx.execute(sql`DELETE FROM view_batches WHERE applied_at < now() - ${KEEP_BATCH_IDS}`);
    return true;
  });
}
