import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { QueueName } from '../shared/config.js';
import { isDatabaseUnavailable } from '../shared/db/unavailable.js';
import { recordJob } from '../shared/metrics.js';
import type { CatalogQueue } from '../shared/queues/catalog.js';
import { InvalidPayloadError, validatePayload } from '../shared/queues/producer.js';
import { installSchedulers } from '../shared/queues/schedulers.js';
import { queueKeyPrefix } from '../shared/keyspace.js';
import { connectRedis } from '../shared/redis.js';
import { processors } from './registry.js';
import type { QueueProcessor, WorkerDeps } from './types.js';

export interface WorkerPool {
  queues: QueueName[];
  /** Stops taking jobs and waits for running ones until the deadline, then closes connections. */
  close(deadlineMs: number): Promise<void>;
}

/** The queues that have a processor; `requested` empty means all of them. */
export function resolveQueues(requested: readonly string[]): QueueName[] {
  const available = Object.keys(processors) as QueueName[];
  if (requested.length === 0) return available;
  const unknown = requested.filter((q) => !available.includes(q as QueueName));
  if (unknown.length > 0)
    throw new Error(`No worker for queue(s): ${unknown.join(', ')}. Available: ${available.join(', ')}`);
  return [...new Set(requested)] as QueueName[];
}

/** Starts one BullMQ Worker per queue, after upserting that queue's schedulers (idempotent across workers). */
/** How many times a job may lose its worker (killed, or its lock lapsed) and still be run again. */
const MAX_STALLED_COUNT = 5;

export async function startWorkerPool(deps: WorkerDeps, requested: readonly string[]): Promise<WorkerPool> {
  const names = resolveQueues(requested);
  const connection = connectRedis(
    { url: deps.redisUrl, clusterNodes: deps.config.redisClusterNodes },
    'worker',
  );
  connection.on('error', (err) => deps.logger.warn({ err: err.message }, 'worker redis connection error'));
  const started: { worker: Worker; processor: QueueProcessor<CatalogQueue> }[] = [];

  for (const name of names) {
    const processor = (await processors[name]!(deps)) as unknown as QueueProcessor<CatalogQueue>;
    await installSchedulers(deps, name);
    const worker = new Worker(name, (job, token) => runJob(name, processor, job, deps, token), {
      connection,
      prefix: queueKeyPrefix(deps.config, name),
      concurrency: processor.concurrency,
      limiter: processor.limiter,
      lockDuration: processor.lock?.durationMs ?? deps.config.workerLockMs,
      stalledInterval: processor.lock?.stalledIntervalMs ?? deps.config.workerLockMs,
      // BullMQ fails a job found stalled a second time without running it again, so two killed workers were enough
      // to end a delivery for good mid-retry (its row left pending). Dying with a job is an operator's event, not
      // the job's fault: it takes a few more before a job is given up as the one killing its workers.
      maxStalledCount: MAX_STALLED_COUNT,
    });
    worker.on('error', (err) => deps.logger.error({ err, queue: name }, 'worker error'));
    worker.on('failed', (job, err) => {
      deps.logger.warn(
        { queue: name, jobId: job?.id, attempt: job?.attemptsMade, err: err.message },
        'job failed',
      );
      if (job) recordJob(name, job, 'failed', err);
    });
    worker.on('completed', (job) => recordJob(name, job, 'completed'));
    started.push({ worker, processor });
  }
  deps.logger.info({ queues: names }, 'workers started');

  return {
    queues: names,
    async close(deadlineMs) {
      const drained = Promise.all(started.map(({ worker }) => worker.close()));
      const late = await Promise.race([
        drained.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(true), deadlineMs).unref()),
      ]);
      // BullMQ cannot force a close already under way, so past the deadline we stop waiting: the jobs still
      // running die with the process, their locks expire and another worker takes them over.
      if (late)
        deps.logger.warn(
          { deadlineMs },
          'jobs still running at the shutdown deadline are left to other workers',
        );
      // Past the deadline the processors stay open: closing one under a running job would end that job's waits as if
      // they had timed out (a list chunk would store `unknown` for addresses nobody probed), and waits for its
      // running work; the process exits instead, and the jobs' locks lapse.
      if (!late) await Promise.all(started.map(({ processor }) => processor.close?.()));
      connection.disconnect();
    },
  };
}

/** How long a job that met a PostgreSQL outage waits before it runs again. */
const DATABASE_RETRY_DELAY_MS = 2000;

async function runJob(
  queue: CatalogQueue,
  processor: QueueProcessor<CatalogQueue>,
  job: Job,
  deps: WorkerDeps,
  token?: string,
) {
  const log = deps.logger.child({
    queue,
    jobId: job.id,
    job: job.name,
    attempt: job.attemptsMade + 1,
    reqId: job.data?.requestId,
  });
  try {
    validatePayload(queue, job.name, job.data);
  } catch (err) {
    // A payload that is wrong now will be wrong on every retry.
    if (err instanceof InvalidPayloadError) throw new UnrecoverableError(err.message);
    throw err;
  }
  const handler = (processor.handlers as Record<string, (p: unknown, c: unknown) => Promise<unknown>>)[
    job.name
  ];
  if (!handler) throw new UnrecoverableError(`no handler for ${queue}/${job.name}`);
  const started = Date.now();
  log.debug('job started');
  let result: unknown;
  try {
    result = await handler(job.data, { job, log });
  } catch (err) {
    if (!isDatabaseUnavailable(err) || !token) throw err;
    // PostgreSQL is away: the job is not at fault, so it waits and runs again without spending an attempt,
    // however long the outage lasts (BullMQ's documented way: move to delayed, then throw DelayedError).
    log.warn(
      { err: (err as Error).message, retryInMs: DATABASE_RETRY_DELAY_MS },
      'database unavailable; job put back',
    );
    await job.moveToDelayed(Date.now() + DATABASE_RETRY_DELAY_MS, token);
    throw new DelayedError();
  }
  log.debug({ durationMs: Date.now() - started }, 'job completed');
  return result;
}
