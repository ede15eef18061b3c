import { Type } from 'typebox';
import { defineQueue, retrying, Unread } from './define.js';

/** Distinct addresses one chunk job of a list verifies (grouped by domain, like a /bulk-verify request). */
export const LIST_CHUNK_ADDRESSES = 100;

/**
 * Chunks of one list in flight at once. Each list runs this many "lanes": chunk k, when done, enqueues chunk
 * k + LIST_LANES at the back of the queue, so the lists of different owners take turns (round robin) and one big
 * list never holds more than this many of the workers' job slots. Enough of a list stays in flight for the host
 * jobs to keep every MX host's connections busy (docs/benchmarks.md, "Verification lists").
 */
export const LIST_LANES = 16;

/**
 * The lanes a list of `uniqueAddresses` runs: one per chunk it has to give, at most LIST_LANES. A 3-address list is
 * one chunk job, not LIST_LANES of which all but one would claim nothing.
 */
export const listLanes = (uniqueAddresses: number): number =>
  Math.min(LIST_LANES, Math.max(1, Math.ceil(uniqueAddresses / LIST_CHUNK_ADDRESSES)));

/** How often the sweeper re-creates the jobs of lists whose chain of chunks was broken (a crash, a Redis restart). */
export const LIST_SWEEP_EVERY_MS = 30_000;

/** Deterministic job id of one chunk: enqueueing it again while it exists is a no-op. */
export const listChunkJobId = (listId: string, chunk: number): string => `list-${listId}-${chunk}`;

/** Deterministic job id of a list's retry of its deferred addresses due at `due` (epoch ms). */
export const listRetryJobId = (listId: string, due: number): string => `list-${listId}-retry-${due}`;

/**
 * The verify-lists queue. Its own queue (not `verify`): a worker serves it with its own concurrency, so lists never
 * take the job slots of the synchronous /bulk-verify jobs, whatever their size. PostgreSQL holds the truth of every
 * list; a lost job is re-created by the sweeper.
 */
export const verifyListsQueue = defineQueue({
  name: 'verify-lists',
  jobs: {
    chunk: {
      listId: Type.String({ minLength: 1, maxLength: 64 }),
      chunk: Type.Integer({ minimum: 0 }),
    },
    // Deferred (greylisted) addresses of a list whose retry is due (shared/lists/retry.ts); a delayed job.
    retry: {
      listId: Type.String({ minLength: 1, maxLength: 64 }),
      due: Type.Integer({ minimum: 0 }),
    },
    sweep: {},
  },
  // Nobody waits for a chunk: its results are stored in PostgreSQL, where the list is read.
  results: { chunk: Unread, retry: Unread, sweep: Unread },
  defaultJobOptions: {
    ...retrying(5, 2000),
    removeOnComplete: { age: 600, count: 5000 },
    removeOnFail: { age: 24 * 3600, count: 1000 },
  },
  schedulers: () => [
    { id: 'verify-lists-sweep', job: 'sweep', payload: {}, repeat: { every: LIST_SWEEP_EVERY_MS } },
  ],
});
