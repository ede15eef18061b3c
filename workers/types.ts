import type { Job } from 'bullmq';
import type { CatalogQueue, JobName, Payload, Result } from '../shared/queues/catalog.js';
import type { Logger } from '../shared/logger.js';
import type { Runtime } from '../shared/runtime.js';

export type WorkerDeps = Pick<Runtime, 'config' | 'logger' | 'database' | 'redis' | 'redisUrl' | 'queues'>;

export interface JobContext {
  job: Job;
  /** Child logger bound to queue, job id, attempt and the request id that enqueued the job. */
  log: Logger;
}

/** How one queue is served: a handler per job name, and the queue's tunables. */
export interface QueueProcessor<Q extends CatalogQueue> {
  concurrency: number;
  limiter?: { max: number; duration: number };
  /**
   * The queue's own job lock and stalled-check period, ms, when WORKER_LOCK_MS (which serves both by default) is
   * too slow a failover for it: a dead worker's job goes back to wait within `durationMs + stalledIntervalMs`.
   */
  lock?: { durationMs: number; stalledIntervalMs: number };
  /** One handler per job, returning what the queue declares as the job's result (shared/queues/<queue>.ts). */
  handlers: { [J in JobName<Q>]: (payload: Payload<Q, J>, context: JobContext) => Promise<Result<Q, J>> };
  /** Releases what the processor opened (models, connections) after its worker has drained. */
  close?: () => Promise<void>;
}

export type ProcessorFactory<Q extends CatalogQueue> = (
  deps: WorkerDeps,
) => QueueProcessor<Q> | Promise<QueueProcessor<Q>>;
