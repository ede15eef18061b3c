import type { Database } from '../db/client.js';
import { handOverPending } from '../delivery/index.js';
import {
  activeLists,
  hasUnclaimed,
  laneStates,
  type LaneState,
  nextRetryDue,
} from '../db/repositories/verification-lists.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queues/producer.js';
import { LIST_LANES, listChunkJobId, listLanes, listRetryJobId } from '../queues/verify-lists.js';
import { gridOf, scheduleRetry } from './retry.js';

export interface SweepDeps {
  database: Database;
  queues: Queues;
  logger: Logger;
}

// A job in one of these states will run (again): its lane is alive.
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Re-creates the jobs of active lists whose chain of chunks broke: a job lost with Redis, a job out of retries,
 * a crash between storing a chunk and enqueueing the next. For each lane of each active list: its latest chunk if
 * that still has addresses without a result, else its next chunk if unclaimed addresses remain (a lane that never
 * started only if it is one of the list's lanes, `listLanes`); a job already
 * waiting or running for it is left alone, a finished or failed one is replaced. PostgreSQL decides what is left,
 * so re-created work never probes an address whose result is stored. Likewise the retry job of a list's next
 * deferred (greylisted) address, from retry_at, and the callbacks recorded but never handed to the delivery queue.
 */
export async function sweepLists(
  deps: SweepDeps,
): Promise<{ lists: number; enqueued: number; callbacks: number }> {
  const queue = deps.queues.queue('verify-lists');
  let enqueued = 0;
  // True when the job will run (again); a finished or failed job of that id is removed so that it can be re-added.
  const isLive = async (jobId: string): Promise<boolean> => {
    const job = await queue.getJob(jobId);
    if (!job) return false;
    if (LIVE.has(await job.getState())) return true;
    await job.remove().catch(() => {});
    return false;
  };
  const lists = await activeLists(deps.database.db);
  for (const { id: listId, uniqueCount } of lists) {
    const lanes = await laneStates(deps.database.db, listId, LIST_LANES);
    const unclaimed = await hasUnclaimed(deps.database.db, listId);
    // Lanes beyond the list's own (listLanes) were never started and have nothing to claim.
    const started = listLanes(uniqueCount);
    const chunkToRun = (lane: LaneState): number | null => {
      if (lane.headPending) return lane.head;
      if (!unclaimed) return null;
      if (lane.head !== null) return lane.head + LIST_LANES;
      return lane.lane < started ? lane.lane : null;
    };
    for (const lane of lanes) {
      const chunk = chunkToRun(lane);
      if (chunk === null) continue;
      const jobId = listChunkJobId(listId, chunk);
      if (await isLive(jobId)) continue;
      await deps.queues.enqueue('verify-lists', 'chunk', { listId, chunk }, { jobId });
      enqueued += 1;
    }
    const due = await nextRetryDue(deps.database.db, listId);
    if (due !== null && !(await isLive(listRetryJobId(listId, gridOf(due))))) {
      await scheduleRetry(deps.queues, listId, due);
      enqueued += 1;
    }
  }
  if (enqueued > 0) deps.logger.info({ lists: lists.length, enqueued }, 'list sweeper re-created chunk jobs');
  // The outbox: callbacks of ended lists (deliveries) whose hand-over to the queue a crash cut off.
  const callbacks = await handOverPending(deps);
  return { lists: lists.length, enqueued, callbacks };
}
