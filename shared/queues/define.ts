import type { JobsOptions } from 'bullmq';
import { Type, type Static, type TObject, type TOptional, type TProperties, type TString } from 'typebox';
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

export interface QueueDefinition<Jobs extends Record<string, TObject>> {
  name: QueueName;
  jobs: Jobs;
  defaultJobOptions: JobsOptions;
  schedulers?: (config: Config) => Scheduler[];
}

export function defineQueue<const J extends Record<string, TProperties>>(definition: {
  name: QueueName;
  jobs: J;
  defaultJobOptions: JobsOptions;
  schedulers?: (config: Config) => Scheduler[];
}): QueueDefinition<{ [K in keyof J]: WithRequestId<J[K]> }> {
  const jobs = Object.fromEntries(
    Object.entries(definition.jobs).map(([name, properties]) => [
      name,
      Type.Object({ ...properties, requestId: Type.Optional(Type.String()) }, { additionalProperties: false }),
    ]),
  ) as { [K in keyof J]: WithRequestId<J[K]> };
  return { ...definition, jobs };
}

/** Retries with exponential backoff; BullMQ adds no jitter by itself, so the processors' errors decide retries. */
export const retrying = (attempts: number, delayMs: number): JobsOptions => ({
  attempts,
  backoff: { type: 'exponential', delay: delayMs, jitter: 0.5 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
});

export type PayloadOf<D extends QueueDefinition<Record<string, TObject>>, J extends keyof D['jobs']> = Static<D['jobs'][J]>;
