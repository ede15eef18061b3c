import type { JobsOptions } from 'bullmq';
import {
  Type,
  type Static,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  type TString,
} from 'typebox';
import type { Config, QueueName } from '../config.js';

/** Every job carries the id of the request that enqueued it, so its logs join the request's. */
type WithRequestId<P extends TProperties> = TObject<P & { requestId: TOptional<TString> }>;

export interface Scheduler {
  /** Stable id: upserting it again from any number of workers leaves one scheduler. */
  id: string;
  job: string;
  payload: Record<string, unknown>;
  repeat: { pattern: string; tz?: string } | { every: number };
}

/** A result schema for every job of a queue. */
type ResultSchemas<Jobs> = { [K in keyof Jobs]: TSchema };

export interface QueueDefinition<
  Jobs extends Record<string, TObject>,
  Results extends ResultSchemas<Jobs> = ResultSchemas<Jobs>,
> {
  name: QueueName;
  jobs: Jobs;
  /**
   * What each job's handler returns. A producer waiting for a job (enqueueAndWait, enqueueAllAndWait) gets the
   * value checked against it, typed as its Static; a value that does not match counts as a failed job.
   */
  results: Results;
  defaultJobOptions: JobsOptions;
  schedulers?: (config: Config) => Scheduler[];
}

export function defineQueue<
  const J extends Record<string, TProperties>,
  const R extends ResultSchemas<J>,
>(definition: {
  name: QueueName;
  jobs: J;
  results: R;
  defaultJobOptions: JobsOptions;
  schedulers?: (config: Config) => Scheduler[];
}): QueueDefinition<{ [K in keyof J]: WithRequestId<J[K]> }, R> {
  const jobs = Object.fromEntries(
    Object.entries(definition.jobs).map(([name, properties]) => [
      name,
      Type.Object(
        { ...properties, requestId: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ]),
  ) as { [K in keyof J]: WithRequestId<J[K]> };
  return { ...definition, jobs };
}

/**
 * The result of a job no producer waits for (scheduled and fire-and-forget jobs): an object, kept with the job for
 * operators and never read by code, so it is declared as such and not spelled out.
 */
export const Unread = Type.Object({}, { additionalProperties: true });

/** The result of a job that a worker skipped instead of running (it expired before a worker took it, …). */
export const Skipped = Type.Object({ skipped: Type.String() });

/** Retries with exponential backoff; BullMQ adds no jitter by itself, so the processors' errors decide retries. */
export const retrying = (attempts: number, delayMs: number): JobsOptions => ({
  attempts,
  backoff: { type: 'exponential', delay: delayMs, jitter: 0.5 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
});

export type PayloadOf<D extends QueueDefinition<Record<string, TObject>>, J extends keyof D['jobs']> = Static<
  D['jobs'][J]
>;
