import {
  completeList,
  deferAddresses,
  lockList,
  storeResults,
  type ClaimedAddress,
  type Executor,
  type RetryPolicy,
} from '../db/repositories/verification-lists.js';
import { isUnanswered, type VerificationResult } from '../verification/index.js';
import { recordEnd } from './end.js';

/**
 * What becomes of a list's probed addresses, shared by its chunks and its retries: a temporary deferral by the remote
 * host (greylisting, another temporary 4xx) or an address its host did not get to in time waits for a retry while
 * the retry window allows, everything else is stored. /verify and /bulk-verify answer at once and never come here.
 */

// The reasons of a 4xx that asks to come back later. Blocks, full mailboxes and timeouts are not retried: time
// does not change them within a retry window, or waiting for them already cost the probe's whole timeout.
const DEFERRAL_REASONS = new Set(['greylisted', 'temporary_failure']);

export function isDeferral(result: Pick<VerificationResult, 'reason' | 'smtp_code'>): boolean {
  return (
    DEFERRAL_REASONS.has(result.reason) &&
    result.smtp_code !== null &&
    result.smtp_code >= 400 &&
    result.smtp_code < 500
  );
}

/**
 * Whether a list waits for a retry of this result: a deferral by the remote host, or an address never probed
 * because its MX host's queue was longer than the chunk's wait (a busy or slow host shared by many lists). Stored
 * as it is, the second would be an `unknown` that says nothing about the mailbox.
 */
const retried = (result: VerificationResult): boolean => isDeferral(result) || isUnanswered(result);

export type Settled =
  | null // the list is no longer running (cancelled while probing): nothing stored
  | {
      /** The list's last result was stored here: it was completed in this transaction. */
      completed: boolean;
      /** Its callback, recorded in the same transaction: the caller hands it over after the commit. */
      delivery: string | null;
      unclaimed: boolean;
      /** Epoch ms of the earliest retry among the addresses deferred here; null when none was. */
      retryDue: number | null;
    };

/**
 * In the caller's transaction: locks the list, defers what may be retried, stores every other result and moves the
 * counters, and completes the list when nothing is left unverified (addresses waiting for a retry count as left),
 * recording its callback with the completion.
 */
export async function settle(
  tx: Executor,
  listId: string,
  claimed: readonly ClaimedAddress[],
  results: readonly VerificationResult[],
  policy: RetryPolicy,
): Promise<Settled> {
  // Cancelled while probing: the results are dropped, as the cancel refunded these addresses.
  if ((await lockList(tx, listId)) !== 'running') return null;
  const deferrable = claimed.filter((_, k) => retried(results[k]!)).map((c) => c.address);
  const deferred = await deferAddresses(tx, listId, deferrable, policy);
  const waiting = new Set(deferred.map((d) => d.address));
  const state = await storeResults(
    tx,
    listId,
    claimed.flatMap((c, k) => (waiting.has(c.address) ? [] : [{ address: c.address, result: results[k] }])),
  );
  const completed = !state.pending && (await completeList(tx, listId));
  return {
    completed,
    delivery: completed ? await recordEnd(tx, listId, 'list.completed') : null,
    unclaimed: state.unclaimed,
    retryDue: deferred.length === 0 ? null : Math.min(...deferred.map((d) => d.due)),
  };
}
