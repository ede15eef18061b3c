import type { Database } from '../db/client.js';
import { deliveriesRepository } from '../db/repositories/deliveries.js';
import { sendOnce, type AttemptResult } from './send.js';
import { signPayload, SIGNATURE_HEADER } from './signature.js';
import type { Resolve } from './target.js';

export const DELIVERY_HEADER = 'X-Agora-Delivery';
export const EVENT_HEADER = 'X-Agora-Event';
export const ATTEMPT_HEADER = 'X-Agora-Attempt';
const USER_AGENT = 'Agora-Delivery/1';

/** What became of one attempt, for the job: done, try again later, or never again. */
export type AttemptOutcome =
  | { kind: 'skipped'; reason: string }
  | { kind: 'delivered'; attempt: number; status: number }
  | { kind: 'retry'; attempt: number; reason: string; gaveUp: boolean }
  | { kind: 'gone'; attempt: number; reason: string };

export interface AttemptOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  resolve?: Resolve;
}

/**
 * 2xx is delivered. A 4xx says the receiver will not take this request however often it is sent (gone), except
 * 408 (timeout) and 429 (slow down). 5xx, other statuses and network errors or timeouts may pass later (retry).
 * A 3xx is gone too: redirects are not followed, and the receiver would answer the same again. A target the guard
 * refuses stays refused.
 */
export function classify(result: AttemptResult): 'delivered' | 'retry' | 'gone' {
  if ('error' in result) return result.blocked ? 'gone' : 'retry';
  const { status } = result;
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 408 || status === 429) return 'retry';
  if (status >= 300 && status < 500) return 'gone';
  return 'retry';
}

/**
 * Makes one attempt of a delivery in `round`, logging it before and after. `lastAttempt`: no retry will follow a
 * failure, so the delivery is marked failed now. Idempotent in the sense that matters: a job run again (retry,
 * or taken over from a dead worker) finds the same row, counts one more attempt on it and sends the same body
 * under the same X-Agora-Delivery id; a delivery already ended is skipped.
 */
export async function attemptDelivery(
  database: Database,
  job: { deliveryId: string; round: number; lastAttempt: boolean },
  options: AttemptOptions,
): Promise<AttemptOutcome> {
  const repository = deliveriesRepository(database);
  const started = await repository.startAttempt(job.deliveryId, job.round);
  if (!started) return { kind: 'skipped', reason: 'delivery already ended, redelivered or unknown' };
  if (started === 'cancelled')
    return { kind: 'skipped', reason: 'cancelled: its webhook subscription is disabled' };

  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [EVENT_HEADER]: started.event,
    [DELIVERY_HEADER]: job.deliveryId,
    [ATTEMPT_HEADER]: String(started.attempt),
    // Signed at each attempt: a receiver's replay window is measured from the attempt, not the first try.
    [SIGNATURE_HEADER]: signPayload(started.secret, started.body),
  };
  const result = await sendOnce(started.url, headers, started.body, options);
  const verdict = classify(result);
  const status = 'status' in result ? result.status : null;
  const error = 'error' in result ? result.error : verdict === 'delivered' ? null : `HTTP ${status}`;
  const state =
    verdict === 'delivered' ? 'delivered' : verdict === 'gone' || job.lastAttempt ? 'failed' : 'pending';
  await repository.finishAttempt(job.deliveryId, job.round, started.attempt, { status, error, state });

  if (verdict === 'delivered') return { kind: 'delivered', attempt: started.attempt, status: status! };
  if (verdict === 'gone') return { kind: 'gone', attempt: started.attempt, reason: error! };
  return { kind: 'retry', attempt: started.attempt, reason: error!, gaveUp: job.lastAttempt };
}
