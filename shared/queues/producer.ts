import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { duplicateConnection, type RedisClient } from '../redis.js';
import { ServiceUnavailableError } from '../errors.js';
import { catalog, type CatalogQueue, type JobName, type Payload, type Result } from './catalog.js';
import { createCompletions, type Completions, type JobOutcome } from './completions.js';

export class InvalidPayloadError extends Error {}

// Compiled once per job schema: every enqueue and every processed job is checked, and the interpreted check was
// ~8 % of a busy bulk-verify service's CPU.
const validators = new WeakMap<TSchema, Validator>();

const compiled = (schema: TSchema): Validator => {
  let validator = validators.get(schema);
  if (!validator) validators.set(schema, (validator = Compile(schema)));
  return validator;
};

export function validatePayload(queue: CatalogQueue, job: string, data: unknown): void {
  const schema = (catalog[queue].jobs as unknown as Record<string, TSchema>)[job];
  if (!schema) throw new InvalidPayloadError(`unknown job ${queue}/${job}`);
  const validator = compiled(schema);
  if (!validator.Check(data)) {
    const first = validator.Errors(data)[0];
    throw new InvalidPayloadError(
      `invalid ${queue}/${job} payload: ${first?.instancePath || '/'} ${first?.message}`,
    );
  }
}

/**
 * A waited-for job's outcome with its value checked against the job's declared result schema: a value that does
 * not match (a handler out of step with its declaration, a job written by an older worker) is a failed job, so
 * the waiting request gets either a value of the declared type or an error, never a surprise.
 */
export function checkOutcome<Q extends CatalogQueue, J extends JobName<Q>>(
  queue: Q,
  job: J,
  outcome: JobOutcome,
): JobOutcome<Result<Q, J>> {
  if (outcome.state !== 'completed') return outcome;
  const schema = (catalog[queue].results as unknown as Record<string, TSchema>)[job];
  if (!schema) return { state: 'failed', reason: `unknown job ${queue}/${job}` };
  const validator = compiled(schema);
  if (validator.Check(outcome.value)) return outcome as JobOutcome<Result<Q, J>>;
  const first = validator.Errors(outcome.value)[0];
  return {
    state: 'failed',
    reason: `invalid ${queue}/${job} result: ${first?.instancePath || '/'} ${first?.message}`,
  };
}

export interface Queues {
  enqueue<Q extends CatalogQueue, J extends JobName<Q>>(
    queue: Q,
    job: J,
    payload: Payload<Q, J>,
    options?: JobsOptions,
  ): Promise<Job>;
  /**
   * Enqueues and waits for the job's return value, checked against its declared result schema; past the deadline
   * a 503 is thrown (the job still runs), a failed job or a result that does not match throws an Error.
   */
  enqueueAndWait<Q extends CatalogQueue, J extends JobName<Q>>(
    queue: Q,
    job: J,
    payload: Payload<Q, J>,
    deadlineMs: number,
    options?: JobsOptions,
  ): Promise<Result<Q, J>>;
  /**
   * Adds several jobs of one kind in one round trip and waits for all of them: one outcome per job, in order,
   * `timeout` for those not ended within `deadlineMs` (they still run), `failed` for a result that does not match
   * the job's declared schema. Throws if they could not be added.
   */
  enqueueAllAndWait<Q extends CatalogQueue, J extends JobName<Q>>(
    queue: Q,
    job: J,
    jobs: readonly { payload: Payload<Q, J>; jobId: string }[],
    deadlineMs: number,
  ): Promise<JobOutcome<Result<Q, J>>[]>;
  queue(name: CatalogQueue): Queue;
  close(): Promise<void>;
}

/**
 * Producers for every queue, created on first use. `connection` is a fail-fast (producer) Redis connection;
 * the QueueEvents used for waiting need blocking connections of their own, which BullMQ duplicates from it.
 * `prefix` is the BullMQ prefix of every queue, or of each queue (shared/keyspace.ts: one hash tag per queue on a
 * Redis Cluster).
 */
export function createQueues(
  connection: RedisClient,
  prefix: string | ((queue: CatalogQueue) => string),
): Queues {
  const prefixOf = (name: CatalogQueue): string => (typeof prefix === 'string' ? prefix : prefix(name));
  const queues = new Map<CatalogQueue, Queue>();
  // The producers' own connection: BullMQ defines its scripts on the connection it is given, and ioredis copies
  // every script defined on a connection into each pipeline made on it, so `connection`'s pipelines (rate limits,
  // caches, the verification dispatch) stay cheap only without them. Opened now, beside `connection`: a Queue
  // created later waits for its connection to be ready, as it would for `connection`.
  const producerConnection = duplicateConnection(connection);
  producerConnection.on('error', () => {}); // the failing call reports it
  const events = new Map<CatalogQueue, Promise<QueueEvents>>();
  const completions = new Map<CatalogQueue, Promise<Completions>>();
  // Every listener created, ready or not: close() ends them without waiting for a start that waits on Redis.
  const listeners = new Set<QueueEvents>();

  const queue = (name: CatalogQueue): Queue => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, {
        connection: producerConnection,
        prefix: prefixOf(name),
        defaultJobOptions: catalog[name].defaultJobOptions,
        // BullMQ keeps the promise of its version check (INFO, sent when the connection is ready): a check that met
        // the producers' command timeout (Redis slow to answer at start) failed every later call on the queue for
        // the life of the process. The workers still check the version.
        skipVersionCheck: true,
      });
      q.on('error', () => {}); // surfaced by the failing call instead
      // job.waitUntilFinished() listens on the queue too: one listener per request waiting on this queue.
      q.setMaxListeners(0);
      queues.set(name, q);
    }
    return q;
  };

  // QueueEvents must be listening before the job is added, or a fast job's completion is missed. Left to itself it
  // reads from `$`, which Redis resolves only when its first XREAD arrives, after a SETNAME round trip of its own: a
  // job added and finished in between (a quick worker, a loaded producer) went unnoticed until the waiter's deadline.
  // So it starts after the stream's last entry as read here, before any job is added. A failed start is forgotten,
  // so that the next wait tries again rather than failing for the life of the process.
  const queueEvents = (name: CatalogQueue): Promise<QueueEvents> => {
    let e = events.get(name);
    if (!e) {
      e = startQueueEvents(name);
      events.set(name, e);
      e.catch(() => {
        events.delete(name);
        completions.delete(name);
      });
    }
    return e;
  };

  const startQueueEvents = async (name: CatalogQueue): Promise<QueueEvents> => {
    const producer = queue(name);
    await producer.waitUntilReady(); // its connection is the producers'
    const [last] = (await producerConnection.xrevrange(producer.keys.events!, '+', '-', 'COUNT', 1)) as [
      string,
      string[],
    ][];
    const qe = new QueueEvents(name, {
      // A blocking reader: the producer's fail-fast command timeout would cut its XREAD BLOCK short and drop
      // events, so a finished job could go unnoticed until the deadline.
      connection: duplicateConnection(connection, {
        maxRetriesPerRequest: null,
        enableOfflineQueue: true,
        commandTimeout: undefined,
      }),
      prefix: prefixOf(name),
      lastEventId: last?.[0] ?? '0-0',
    });
    listeners.add(qe);
    qe.on('error', () => {});
    // Every request waiting on a job adds listeners here; as many may wait at once as requests are in flight.
    qe.setMaxListeners(0);
    try {
      await qe.waitUntilReady();
    } catch (err) {
      listeners.delete(qe);
      await qe.close().catch(() => {});
      throw err;
    }
    return qe;
  };

  const completionsOf = (name: CatalogQueue): Promise<Completions> => {
    let c = completions.get(name);
    if (!c) {
      c = queueEvents(name).then((qe) => createCompletions(qe, queue(name)));
      completions.set(name, c);
    }
    return c;
  };

  /**
   * The queue's completions once its listener is ready, or a 503 at `deadline`: the first wait on a queue starts the
   * listener, and that start waits for Redis as long as Redis is away. The start goes on for the next request.
   */
  const completionsBy = async (name: CatalogQueue, deadline: number): Promise<Completions> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ServiceUnavailableError(`The ${name} queue could not be reached in time`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    try {
      return await Promise.race([completionsOf(name), late]);
    } finally {
      clearTimeout(timer);
    }
  };

  const enqueueAllAndWait: Queues['enqueueAllAndWait'] = async (name, job, jobs, deadlineMs) => {
    for (const { payload } of jobs) validatePayload(name, job, payload);
    const deadline = Date.now() + deadlineMs;
    const waiting = await completionsBy(name, deadline);
    const outcomes = await waiting.waitFor(
      jobs.map((j) => j.jobId),
      Math.max(0, deadline - Date.now()),
      (adding) =>
        queue(name).addBulk(
          adding.map(({ index, jobId }) => ({ name: job, data: jobs[index]!.payload, opts: { jobId } })),
        ),
    );
    return outcomes.map((outcome) => checkOutcome(name, job, outcome));
  };

  const enqueue: Queues['enqueue'] = async (name, job, payload, options) => {
    validatePayload(name, job, payload);
    return queue(name).add(job, payload, options);
  };

  return {
    enqueue,
    queue,
    enqueueAllAndWait,
    async enqueueAndWait(name, job, payload, deadlineMs, options) {
      // The id is chosen here so that the wait is registered before the job exists.
      const jobId = options?.jobId ?? randomUUID();
      validatePayload(name, job, payload);
      const deadline = Date.now() + deadlineMs;
      const waiting = await completionsBy(name, deadline);
      const [raw] = await waiting.waitFor([jobId], Math.max(0, deadline - Date.now()), ([adding]) =>
        queue(name).add(job, payload, { ...options, jobId: adding!.jobId }),
      );
      const outcome = raw && checkOutcome(name, job, raw);
      if (outcome?.state === 'completed') return outcome.value;
      if (outcome?.state === 'failed') throw new Error(outcome.reason);
      throw new ServiceUnavailableError(`The ${name} job did not finish within ${deadlineMs} ms`);
    },
    async close() {
      // A start still waiting for Redis is not awaited: its listener is closed below, which ends the start.
      for (const c of completions.values()) void c.then((done) => done.close()).catch(() => {});
      await Promise.all([...listeners].map((qe) => qe.close().catch(() => {})));
      await Promise.all([...queues.values()].map((q) => q.close().catch(() => {})));
      producerConnection.disconnect();
    },
  };
}
