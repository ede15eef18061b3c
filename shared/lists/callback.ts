import type { Database } from '../db/client.js';
import { callbackSecret, type Executor } from '../db/repositories/verification-lists.js';
import { checkCallbackUrl, deliveryStatus, handOver, recordDelivery } from '../delivery/index.js';
import { ValidationError } from '../errors.js';
import type { Queues } from '../queues/producer.js';

/**
 * A list's callback, the only module of the list code that talks to the delivery code (shared/delivery): the URL
 * checked at creation by the same guard as every outbound target, the end of a list recorded as one signed delivery
 * in the outbox and handed to the queue after the commit, and its state read back for `GET /lists/{id}`.
 */

export type ListEvent = 'list.completed' | 'list.cancelled' | 'list.failed';

export interface CallbackDeps {
  database: Database;
  queues: Queues;
}

/** The delivery subject of a list's callback: one per list. */
export const listSubject = (listId: string): string => `list:${listId}`;

/** Throws a 400 for a callback URL that cannot be used (syntax, scheme, length, or a private target). */
export async function checkListCallbackUrl(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkCallbackUrl(url, { allowPrivate });
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(`callback_url: ${err.message}`);
    throw err;
  }
}

/**
 * Records the end of a list as one signed delivery, in the transaction that ended it (the outbox: the two commit
 * together): `{event, data: List}` POSTed to the callback URL, signed with the webhook secret of the key that created
 * the list. Null when nothing is to be sent: no callback URL, or the key was revoked since (no secret any more).
 */
export async function recordListCallback(
  tx: Executor,
  list: { id: string; callbackUrl: string | null; keyId: number },
  event: ListEvent,
  body: unknown,
): Promise<string | null> {
  if (list.callbackUrl === null) return null;
  const secret = await callbackSecret(tx, list.keyId);
  if (secret === null) return null;
  return recordDelivery(tx, { url: list.callbackUrl, secret, event, body, subject: listSubject(list.id) });
}

/** After the commit: hands a recorded callback to the delivery queue (if this fails, the sweeper does it). */
export async function handOverListCallback(deps: CallbackDeps, deliveryId: string): Promise<void> {
  await handOver(deps, deliveryId);
}

export interface CallbackStatus {
  attempts: number;
  last_status: number | null;
  delivered_at: string | null;
}

/** The delivery state of a list's callback: nothing attempted until the list has ended. */
export async function listCallbackStatus(database: Database, listId: string): Promise<CallbackStatus> {
  return (
    (await deliveryStatus(database, listSubject(listId))) ?? {
      attempts: 0,
      last_status: null,
      delivered_at: null,
    }
  );
}
