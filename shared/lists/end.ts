import type { Database } from '../db/client.js';
import { endActiveList, findList, lockList, type Executor } from '../db/repositories/verification-lists.js';
import { ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queues/producer.js';
import type { ChargeWindows, ListBudget } from './budget.js';
import { handOverListCallback, recordListCallback, type ListEvent } from './callback.js';
import { toListView } from './view.js';

export interface EndDeps {
  database: Database;
  queues: Queues;
  budget: ListBudget;
  logger: Logger;
}

/**
 * In the transaction whose conditional UPDATE ended the list (so once per list): its callback with the list as it
 * ended, recorded in the outbox. Returns the delivery to hand over after the commit, or null (no callback).
 */
export async function recordEnd(tx: Executor, listId: string, event: ListEvent): Promise<string | null> {
  const list = await findList(tx, listId, null);
  if (!list || list.callback_url === null) return null;
  const data = toListView(list, { attempts: 0, last_status: null, delivered_at: null });
  try {
    return await recordListCallback(
      tx,
      { id: list.id, callbackUrl: list.callback_url, keyId: list.key_id },
      event,
      { event, data },
    );
  } catch (err) {
    // A callback that could never be delivered (checked at creation, so not expected) must not undo the end.
    if (err instanceof ValidationError) return null;
    throw err;
  }
}

/** After the commit: the recorded callback to the delivery queue. A failure is the sweeper's to repair. */
export async function handOverEnd(
  deps: Pick<EndDeps, 'database' | 'queues' | 'logger'>,
  listId: string,
  deliveryId: string | null,
): Promise<void> {
  if (deliveryId === null) return;
  try {
    await handOverListCallback(deps, deliveryId);
  } catch (err) {
    deps.logger.warn({ err, listId }, 'list callback not handed to the queue yet; the sweeper will');
  }
}

/**
 * Ends a queued or running list as cancelled (DELETE) or failed (a job out of retries): nothing more is probed,
 * what is done stays readable, the points of the addresses never verified go back. False if it was not active.
 */
export async function endList(
  deps: EndDeps,
  listId: string,
  status: 'cancelled' | 'failed',
): Promise<boolean> {
  const ended = await deps.database.db.transaction(async (tx) => {
    // Chunk writers hold this lock while they store results: once it is ours, none is half-way.
    if (!(await lockList(tx, listId))) return undefined;
    const done = await endActiveList(tx, listId, status);
    if (!done) return undefined;
    const charge = await chargeOf(tx, listId);
    const delivery = await recordEnd(tx, listId, status === 'cancelled' ? 'list.cancelled' : 'list.failed');
    return { ...done, ...charge, delivery };
  });
  if (!ended) return false;
  if (ended.charged > 0 && ended.unverified > 0) {
    await deps.budget
      .refund(ended.keyId, Math.min(ended.unverified, ended.charged), ended.windows)
      .catch((err: unknown) =>
        deps.logger.warn({ err, listId }, 'list refund lost (the window stays stricter)'),
      );
  }
  await handOverEnd(deps, listId, ended.delivery);
  return true;
}

async function chargeOf(tx: Executor, listId: string) {
  const list = (await findList(tx, listId, null))!;
  return { keyId: list.key_id, charged: list.charged, windows: list.charge_windows as ChargeWindows | null };
}
