import type { Database } from '../db/client.js';
import {
  claimChunk,
  completeList,
  hasUnclaimed,
  lockForWork,
  lockList,
  markStarted,
  storeResults,
} from '../db/repositories/verification-lists.js';
import type { Queues } from '../queues/producer.js';
import { LIST_CHUNK_ADDRESSES, LIST_LANES } from '../queues/verify-lists.js';
import type { Verifier } from '../verification/index.js';
import { enqueueChunks } from './enqueue.js';

export interface ChunkDeps {
  database: Database;
  queues: Queues;
  verifier: Pick<Verifier, 'verifyDomainGroup'>;
}

export type ChunkOutcome =
  | { state: 'inactive' } // the list is gone, cancelled or ended: nothing probed
  | { state: 'done'; verified: number; completed: boolean };

/**
 * One chunk job of a list: claim (or find again, after a crash) this chunk's addresses, verify the ones without a
 * result by domain with the engine, store every row's result and the counters in one transaction, then hand the
 * lane on to chunk + LIST_LANES while unclaimed addresses remain. Completing the list is decided by a conditional
 * UPDATE, so exactly one chunk fires the callback (the caller, when `completed`).
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
  let unclaimed: boolean;
  if (claimed.length > 0) {
    const results = await deps.verifier.verifyDomainGroup(
      claimed.map((c) => c.email),
      undefined,
      work.maxAgeSec === null ? {} : { maxAgeSec: work.maxAgeSec },
    );
    const stored = await db.transaction(async (tx) => {
      // Cancelled while probing: the results are dropped, as the cancel refunded these addresses.
      if ((await lockList(tx, listId)) !== 'running') return null;
      const state = await storeResults(
        tx,
        listId,
        claimed.map((c, k) => ({ address: c.address, result: results[k] })),
      );
      return { ...state, completed: !state.pending && (await completeList(tx, listId)) };
    });
    if (stored === null) return { state: 'inactive' };
    completed = stored.completed;
    unclaimed = stored.unclaimed;
  } else {
    unclaimed = await hasUnclaimed(db, listId);
  }
  if (unclaimed) await enqueueChunks(deps.queues, listId, [chunk + LIST_LANES]);
  return { state: 'done', verified: claimed.length, completed };
}
