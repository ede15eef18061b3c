import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { Redis } from '../redis.js';
import { ServiceUnavailableError } from '../errors.js';
import { catalog, type CatalogQueue, type JobName, type Payload } from './catalog.js';

export class InvalidPayloadError extends Error {}

export function validatePayload(queue: CatalogQueue, job: string, data: unknown): void {
  const schema = (catalog[queue].jobs as unknown as Record<string, TSchema>)[job];
  if (!schema) throw new InvalidPayloadError(`unknown job ${queue}/${job}`);
  if (!Value.Check(schema, data)) {
    const first = [...Value.Errors(schema, data)][0];
    throw new InvalidPayloadError(
      `invalid ${queue}/${job} payload: ${first?.instancePath || '/'} ${first?.message}`,
    );
  }
}

export interface Queues {
  enqueue<Q extends CatalogQueue, J extends JobName<Q>>(
    queue: Q,
    job: J,
    payload: Payload<Q, J>,
    options?: JobsOptions,
  ): Promise<Job>;
  /** Enqueues and waits for the job's return value; past the deadline a 503 is thrown (the job still runs). */
  enqueueAndWait<Q extends CatalogQueue, J extends JobName<Q>>(
    queue: Q,
    job: J,
    payload: Payload<Q, J>,
    deadlineMs: number,
    options?: JobsOptions,
  ): Promise<unknown>;
  queue(name: CatalogQueue): Queue;
  close(): Promise<void>;
}

/**
 * Producers for every queue, created on first use. `connection` is a fail-fast (producer) Redis connection;
 * the QueueEvents used for waiting need blocking connections of their own, which BullMQ duplicates from it.
 */
export function createQueues(connection: Redis, prefix: string): Queues {
  const queues = new Map<CatalogQueue, Queue>();
  const events = new Map<CatalogQueue, Promise<QueueEvents>>();

  const queue = (name: CatalogQueue): Queue => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection, prefix, defaultJobOptions: catalog[name].defaultJobOptions });
      q.on('error', () => {}); // surfaced by the failing call instead
      // job.waitUntilFinished() listens on the queue too: one listener per request waiting on this queue.
      q.setMaxListeners(0);
      queues.set(name, q);
    }
    return q;
  };

  // QueueEvents must be listening before the job is added, or a fast job's completion is missed.
  const queueEvents = (name: CatalogQueue): Promise<QueueEvents> => {
    let e = events.get(name);
    if (!e) {
      const qe = new QueueEvents(name, {
        // A blocking reader: the producer's fail-fast command timeout would cut its XREAD BLOCK short and drop
        // events, so a finished job could go unnoticed until the deadline.
        connection: connection.duplicate({
          maxRetriesPerRequest: null,
          enableOfflineQueue: true,
          commandTimeout: undefined,
        }),
        prefix,
      });
      qe.on('error', () => {});
      // Every request waiting on a job adds listeners here; as many may wait at once as requests are in flight.
      qe.setMaxListeners(0);
      e = qe.waitUntilReady().then(() => qe);
      events.set(name, e);
    }
    return e;
  };

  const enqueue: Queues['enqueue'] = async (name, job, payload, options) => {
    validatePayload(name, job, payload);
    return queue(name).add(job, payload, options);
  };

  return {
    enqueue,
    queue,
    async enqueueAndWait(name, job, payload, deadlineMs, options) {
      const qe = await queueEvents(name);
      const added = await enqueue(name, job, payload, options);
      try {
        return await added.waitUntilFinished(qe, deadlineMs);
      } catch (err) {
        if (err instanceof Error && /timed out|TTL/i.test(err.message)) {
          throw new ServiceUnavailableError(`The ${name} job did not finish within ${deadlineMs} ms`);
        }
        throw err;
      }
    },
    async close() {
      const all = await Promise.all([...events.values()].map((p) => p.catch(() => undefined)));
      await Promise.all(all.map((qe) => qe?.close().catch(() => {})));
      await Promise.all([...queues.values()].map((q) => q.close().catch(() => {})));
    },
  };
}
