import type { Database } from '../db/client.js';
import {
  claimChunk,
  hasUnclaimed,
  lockForWork,
  markStarted,
  type RetryPolicy,
} from '../db/repositories/verification-lists.js';
import type { Queues } from '../queues/producer.js';
import { LIST_CHUNK_ADDRESSES, LIST_LANES } from '../queues/verify-lists.js';
import type { Verifier } from '../verification/index.js';
import { enqueueChunks } from './enqueue.js';
import { probeAndSettle } from './probe.js';
import { scheduleRetry } from './retry.js';

export interface ChunkDeps {
  database: Database;
  queues: Queues;
  verifier: Pick<Verifier, 'verifyDomainGroup'>;
  retry: RetryPolicy;
}

export type ChunkOutcome =
  | { state: 'inactive' } // the list is gone, cancelled or ended: nothing probed
  | { state: 'done'; verified: number; completed: boolean; delivery: string | null };

/**
 * One chunk job of a list: claim (or find again, after a crash) this chunk's addresses, verify the ones without a
 * result by domain with the engine (honouring the list's max_age), storing the results with the counters as their
 * hosts answer them (probe.ts), except for addresses the remote host deferred (greylisting), which wait for a retry
 * job. Hands
 * the lane on to chunk + LIST_LANES while unclaimed addresses remain. Completing the list is decided by a
 * conditional UPDATE, so exactly one job fires the callback (the caller, when `completed`).
 */
export async function processChunk(deps: ChunkDeps, listId: string, chunk: number): Promise<ChunkOutcome> {
  const db = deps.database.db;
  const work = await db.transaction(async (tx) => {
    const list = await lockForWork(tx, listId);
    if (list?.status !== 'queued' && list?.status !== 'running') return null;
    await markStarted(tx, listId);
    return { claimed: await claimChunk(tx, listId, chunk, LIST_CHUNK_ADDRESSES), maxAgeSec: list.maxAgeSec };
  });
  if (work === null) return { state: 'inactive' };
  const { claimed } = work;

  let completed = false;
  let delivery: string | null = null;
  let unclaimed: boolean;
  if (claimed.length > 0) {
    const settled = await probeAndSettle(deps, listId, claimed, work.maxAgeSec);
    if (settled === null) return { state: 'inactive' };
    completed = settled.completed;
    delivery = settled.delivery;
    unclaimed = settled.unclaimed;
    // Lost (a crash right here, Redis gone), the retry job is re-created by the sweeper from retry_at.
    if (settled.retryDue !== null) await scheduleRetry(deps.queues, listId, settled.retryDue);
  } else {
    unclaimed = await hasUnclaimed(db, listId);
  }
  if (unclaimed) await enqueueChunks(deps.queues, listId, [chunk + LIST_LANES]);
  return { state: 'done', verified: claimed.length, completed, delivery };
}
