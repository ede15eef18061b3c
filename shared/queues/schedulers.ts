import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { catalog, type CatalogQueue } from './catalog.js';
import type { Queues } from './producer.js';

/** Tries at installing a queue's job schedulers, a second apart: a minute, long enough for a reconnect. */
const ATTEMPTS = 60;
const PAUSE_MS = 1000;

/**
 * Installs (upserts) the job schedulers the catalog declares for `queue`: idempotent, and a no-op for those that
 * exist. Retried a second apart for up to a minute, because it runs exactly when Redis may be coming back: at a
 * worker's start, and after a Redis restart that lost every scheduler (the producers' connection then reconnects on
 * its own schedule). Gives up early once `stopped()` says so; throws the last error after the last attempt.
 */
export async function installSchedulers(
  deps: { config: Config; queues: Queues; logger: Logger },
  queue: CatalogQueue,
  stopped: () => boolean = () => false,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      for (const s of catalog[queue].schedulers?.(deps.config) ?? [])
        await deps.queues.queue(queue).upsertJobScheduler(s.id, s.repeat, { name: s.job, data: s.payload });
      return;
    } catch (err) {
      if (attempt >= ATTEMPTS || stopped()) throw err;
      deps.logger.warn({ err, queue, attempt }, 'could not install the job schedulers; trying again');
      await sleep(PAUSE_MS);
    }
  }
}
