import type { Database } from '../db/client.js';
import {
  claimDue,
  lockForWork,
  nextRetryDue,
  type RetryPolicy,
} from '../db/repositories/verification-lists.js';
import type { Queues } from '../queues/producer.js';
import { LIST_CHUNK_ADDRESSES, listRetryJobId } from '../queues/verify-lists.js';
import type { Verifier } from '../verification/index.js';
import { probeAndSettle } from './probe.js';

/**
 * Retries of a list's deferred (greylisted) addresses. PostgreSQL holds which addresses wait and until when
 * (retry_at); a BullMQ delayed `retry` job per due time wakes the list then. Its job id is the list and the due time
 * rounded up to RETRY_GRID_MS, so the chunks of a list deferring addresses at about the same time share one job,
 * and the sweeper can ask for the same job again without doubling it.
 */

// How long a retry may probe its addresses before they count as due again (its worker died): a few SMTP timeouts.
export const RETRY_LEASE_MS = 5 * 60_000;
const RETRY_GRID_MS = 1000;

export interface RetryDeps {
  database: Database;
  queues: Pick<Queues, 'enqueue'>;
  verifier: Pick<Verifier, 'verifyDomainGroup'>;
  retry: RetryPolicy;
}

export const gridOf = (due: number): number => Math.ceil(due / RETRY_GRID_MS) * RETRY_GRID_MS;

/** Enqueues the delayed retry job of a list for `due` (epoch ms); a no-op while that job exists. */
export async function scheduleRetry(
  queues: Pick<Queues, 'enqueue'>,
  listId: string,
  due: number,
): Promise<void> {
  const at = gridOf(due);
  await queues.enqueue(
    'verify-lists',
    'retry',
    { listId, due: at },
    { jobId: listRetryJobId(listId, at), delay: Math.max(0, at - Date.now()) },
  );
}

export type RetryOutcome =
  { state: 'inactive' } | { state: 'done'; verified: number; completed: boolean; delivery: string | null };

/**
 * One retry job: probes every deferred address of the list whose retry is due, a batch at a time, settling each as
 * a chunk does (deferred again, or stored), then schedules the job of the next due address.
 */
export async function processRetry(deps: RetryDeps, listId: string, due: number): Promise<RetryOutcome> {
  const db = deps.database.db;
  let verified = 0;
  let completed = false;
  let delivery: string | null = null;
  for (;;) {
    const work = await db.transaction(async (tx) => {
      const list = await lockForWork(tx, listId);
      if (list?.status !== 'running') return null;
      return {
        claimed: await claimDue(tx, listId, LIST_CHUNK_ADDRESSES, RETRY_LEASE_MS),
        maxAgeSec: list.maxAgeSec,
      };
    });
    if (work === null) return { state: 'inactive' };
    if (work.claimed.length === 0) break;
    const settled = await probeAndSettle(deps, listId, work.claimed, work.maxAgeSec);
    if (settled === null) return { state: 'inactive' };
    verified += work.claimed.length;
    if (settled.completed) {
      completed = true;
      delivery = settled.delivery;
    }
  }
  const next = await nextRetryDue(db, listId);
  // This job's own id is taken until it ends: a next retry due within its grid step goes one step later.
  if (next !== null) await scheduleRetry(deps.queues, listId, Math.max(next, gridOf(due) + RETRY_GRID_MS));
  return { state: 'done', verified, completed, delivery };
}
