import { webhookSecretForKey } from '../access/webhook-secret.js';
import type { Database } from '../db/client.js';
import { checkCallbackUrl, deliveryStatus, enqueueDelivery } from '../delivery/index.js';
import { ValidationError } from '../errors.js';
import type { Queues } from '../queues/producer.js';

/**
 * A list's callback, the only module of the list code that talks to the delivery queue (shared/delivery): the
 * URL checked at creation by the same guard as every outbound target, the end of a list handed over as one signed
 * delivery, and its state read back for `GET /lists/{id}`.
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
 * Hands the end of a list to the delivery queue: `{event, data: List}` POSTed to the callback URL, signed with
 * the webhook secret of the key that created the list. Called once per list, by whoever's conditional UPDATE
 * ended it. A key revoked since has no secret any more: nothing is sent.
 */
export async function notifyListEnded(
  deps: CallbackDeps,
  list: { id: string; callbackUrl: string | null; keyId: number },
  event: ListEvent,
  body: unknown,
): Promise<void> {
  if (list.callbackUrl === null) return;
  const secret = await webhookSecretForKey(deps.database, list.keyId);
  if (secret === null) return;
  await enqueueDelivery(deps, { url: list.callbackUrl, secret, event, body, subject: listSubject(list.id) });
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
