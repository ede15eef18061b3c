import { setMaxListeners } from 'node:events';
import type { Database } from '../db/client.js';
import { listStatus, type ClaimedAddress, type RetryPolicy } from '../db/repositories/verification-lists.js';
import type { Verifier, VerificationResult } from '../verification/index.js';
import { settle } from './settle.js';

/**
 * Probing a list's claimed addresses (a chunk, or a retry's batch) with results settled as they come: a host answers
 * a batch of a domain's addresses at a time, and a chunk may hold a hundred addresses of one slow domain, so waiting
 * for the whole chunk would leave the list's progress and results still for minutes. What came in is settled twice a
 * second, each time in a transaction of its own; when nothing came in, the list's status is looked at
 * instead. Either way a cancel is noticed within half a second, and the probing stops: the addresses no host has
 * started are withdrawn from their hosts and never probed.
 */

/** How often the results that came in are settled (or, when none did, the list's status is read). */
export const SETTLE_EVERY_MS = 500;

export interface ProbeDeps {
  database: Database;
  verifier: Pick<Verifier, 'verifyDomainGroup'>;
  retry: RetryPolicy;
}

export interface ProbeOutcome {
  /** The list's last result was stored by one of these settlements: it was completed there. */
  completed: boolean;
  /** The callback recorded with the completion, for the caller to hand over. */
  delivery: string | null;
  /** Addresses of the list no chunk has claimed yet (as of the last settlement). */
  unclaimed: boolean;
  /** Epoch ms of the earliest retry among the addresses deferred here; null when none was. */
  retryDue: number | null;
}

/** Verifies `claimed` and settles every result. Null: the list stopped running (cancelled) meanwhile. */
export async function probeAndSettle(
  deps: ProbeDeps,
  listId: string,
  claimed: readonly ClaimedAddress[],
  maxAgeSec: number | null,
): Promise<ProbeOutcome | null> {
  const db = deps.database.db;
  const abort = new AbortController();
  // One listener per domain of the batch (each domain's dispatch withdraws its own items): not a leak.
  setMaxListeners(0, abort.signal);
  const results: VerificationResult[] = [];
  let arrived: number[] = []; // indexes of `claimed` whose results are not settled yet
  let stopped = false;
  const outcome: ProbeOutcome = { completed: false, delivery: null, unclaimed: true, retryDue: null };

  const stop = (): void => {
    stopped = true;
    arrived = [];
    abort.abort();
  };

  // Throws when PostgreSQL fails; the batch is kept for the next try.
  const settleArrived = async (): Promise<void> => {
    if (stopped) return;
    const batch = arrived;
    arrived = [];
    try {
      if (batch.length === 0) {
        if ((await listStatus(db, listId)) !== 'running') stop();
        return;
      }
      const settled = await db.transaction((tx) =>
        settle(
          tx,
          listId,
          batch.map((k) => claimed[k]!),
          batch.map((k) => results[k]!),
          deps.retry,
        ),
      );
      if (settled === null) return stop();
      outcome.completed ||= settled.completed;
      outcome.delivery ??= settled.delivery;
      outcome.unclaimed = settled.unclaimed;
      if (settled.retryDue !== null)
        outcome.retryDue = Math.min(outcome.retryDue ?? Infinity, settled.retryDue);
    } catch (err) {
      if (!stopped) arrived = batch.concat(arrived);
      throw err;
    }
  };

  let settling: Promise<void> | null = null;
  const ticker = setInterval(() => {
    settling ??= settleArrived()
      .catch(() => {}) // PostgreSQL away: the results wait for the next tick, or the last settlement reports it
      .finally(() => (settling = null));
  }, SETTLE_EVERY_MS);

  let probeError: unknown = null;
  try {
    await deps.verifier.verifyDomainGroup(
      claimed.map((c) => c.email),
      undefined,
      {
        ...(maxAgeSec === null ? {} : { maxAgeSec }),
        signal: abort.signal,
        onResult: (k, result) => {
          results[k] = result;
          if (!stopped) arrived.push(k);
        },
      },
    );
  } catch (err) {
    probeError = err; // the results that did come are still settled, so that a retry does not probe them again
  } finally {
    clearInterval(ticker);
    await settling;
  }
  await settleArrived();
  if (probeError !== null) throw probeError;
  return stopped ? null : outcome;
}
