import type { Database } from '../db/client.js';
import { endActiveList, findList, lockList, type Executor } from '../db/repositories/verification-lists.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queues/producer.js';
import type { ChargeWindows, ListBudget } from './budget.js';
import { notifyListEnded, type ListEvent } from './callback.js';
import { viewOf } from './view.js';

export interface EndDeps {
  database: Database;
  queues: Queues;
  budget: ListBudget;
  logger: Logger;
}

/**
 * After a list ended (the caller's conditional UPDATE did it, so this runs once per list): the callback with the
 * list as it ended.
 */
export async function announceEnd(deps: EndDeps, listId: string, event: ListEvent): Promise<void> {
  const list = await findList(deps.database.db, listId, null);
  if (!list || list.callback_url === null) return;
  const data = await viewOf(deps.database, list);
  try {
    await notifyListEnded(deps, { id: list.id, callbackUrl: list.callback_url, keyId: list.key_id }, event, {
      event,
      data,
    });
  } catch (err) {
    deps.logger.error({ err, listId }, 'could not hand a list callback to the delivery queue');
  }
}

/**
 * Ends a queued or running list as cancelled (DELETE) or failed (a chunk out of retries): nothing more is probed,
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
    return { ...done, ...charge };
  });
  if (!ended) return false;
  if (ended.charged > 0 && ended.unverified > 0) {
    await deps.budget
      .refund(ended.keyId, Math.min(ended.unverified, ended.charged), ended.windows)
      .catch((err: unknown) =>
        deps.logger.warn({ err, listId }, 'list refund lost (the window stays stricter)'),
      );
  }
  await announceEnd(deps, listId, status === 'cancelled' ? 'list.cancelled' : 'list.failed');
  return true;
}

async function chargeOf(tx: Executor, listId: string) {
  const list = (await findList(tx, listId, null))!;
  return { keyId: list.key_id, charged: list.charged, windows: list.charge_windows as ChargeWindows | null };
}
