import type { Database } from '../db/client.js';
import { activeListIds, hasUnclaimed, laneStates } from '../db/repositories/verification-lists.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queues/producer.js';
import { LIST_LANES, listChunkJobId } from '../queues/verify-lists.js';

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
 * that still has addresses without a result, else its next chunk if unclaimed addresses remain; a job already
 * waiting or running for it is left alone, a finished or failed one is replaced. PostgreSQL decides what is left,
 * so re-created work never probes an address whose result is stored.
 */
export async function sweepLists(deps: SweepDeps): Promise<{ lists: number; enqueued: number }> {
  const queue = deps.queues.queue('verify-lists');
  let enqueued = 0;
  const ids = await activeListIds(deps.database.db);
  for (const listId of ids) {
    const lanes = await laneStates(deps.database.db, listId, LIST_LANES);
    const unclaimed = await hasUnclaimed(deps.database.db, listId);
    for (const lane of lanes) {
      const chunk = lane.headPending
        ? lane.head!
        : unclaimed
          ? lane.head === null
            ? lane.lane
            : lane.head + LIST_LANES
          : null;
      if (chunk === null) continue;
      const jobId = listChunkJobId(listId, chunk);
      const job = await queue.getJob(jobId);
      if (job) {
        const state = await job.getState();
        if (LIVE.has(state)) continue;
        await job.remove().catch(() => {});
      }
      await deps.queues.enqueue('verify-lists', 'chunk', { listId, chunk }, { jobId });
      enqueued += 1;
    }
  }
  if (enqueued > 0) deps.logger.info({ lists: ids.length, enqueued }, 'list sweeper re-created chunk jobs');
  return { lists: ids.length, enqueued };
}
