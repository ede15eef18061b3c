import type { Database } from '../db/client.js';
import { ValidationError } from '../errors.js';
import type { Queues } from '../queues/producer.js';

/**
 * The list's callback, behind one module so the rest of the list code does not change when delivery does.
 *
 * TEMPORARY IMPLEMENTATION. The delivery queue, its signing and the keys' webhook secrets are built by another
 * helper in shared/delivery/ (enqueueDelivery, deliveryStatus, checkCallbackUrl). Until it is merged this module
 * only checks a callback URL's syntax (http or https), sends nothing and records nothing; the lead switches the
 * three functions below to shared/delivery when merging:
 *   checkListCallbackUrl  -> checkCallbackUrl(url)                       (also refuses private targets)
 *   notifyListEnded       -> enqueueDelivery(queues, { url, secret: <the key's webhook_secret>, event, body,
 *                                                      subject: listSubject(id) })
 *   listCallbackStatus    -> deliveryStatus(database, listSubject(id))
 */

export type ListEvent = 'list.completed' | 'list.cancelled' | 'list.failed';

export interface CallbackDeps {
  database: Database;
  queues: Queues;
}

/** The delivery subject of a list's callback: one per list. */
export const listSubject = (listId: string): string => `list:${listId}`;

/** Throws a 400 for a callback URL that cannot be used. */
export async function checkListCallbackUrl(url: string): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError('callback_url must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new ValidationError('callback_url must be an absolute http or https URL');
}

/**
 * Hands the end of a list to the delivery queue: `{event, data: List}` POSTed to the callback URL. Called once
 * per list, by whoever's conditional UPDATE ended it. Temporary: sends nothing (see above).
 */
export async function notifyListEnded(
  _deps: CallbackDeps,
  _list: { id: string; callbackUrl: string | null; keyId: number },
  _event: ListEvent,
  _body: unknown,
): Promise<void> {}

export interface CallbackStatus {
  attempts: number;
  last_status: number | null;
  delivered_at: string | null;
}

/** The delivery state of a list's callback. Temporary: nothing is delivered yet, so nothing was attempted. */
export async function listCallbackStatus(_database: Database, _listId: string): Promise<CallbackStatus> {
  return { attempts: 0, last_status: null, delivered_at: null };
}
