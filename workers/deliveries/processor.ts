import { UnrecoverableError } from 'bullmq';
import { attemptDelivery } from '../../shared/delivery/attempt.js';
import type { ProcessorFactory } from '../types.js';

// Deliveries spend their time waiting on receivers (up to WEBHOOK_TIMEOUT_MS each), not on CPU: many at once per
// worker, so that a few slow receivers do not hold up everyone else's callbacks.
const CONCURRENCY = 32;

/**
 * Sends deliveries (shared/delivery): one HTTP attempt per job run. A failure that may pass is thrown, and BullMQ
 * retries it on the delivery's schedule; one that will not (4xx, redirect, refused address) is an
 * UnrecoverableError. Timeout and address guard: WEBHOOK_TIMEOUT_MS, WEBHOOK_ALLOW_PRIVATE.
 */
export const deliveriesProcessor: ProcessorFactory<'deliveries'> = (deps) => {
  const options = {
    timeoutMs: deps.config.webhook.timeoutMs,
    allowPrivate: deps.config.webhook.allowPrivate,
  };
  return {
    concurrency: CONCURRENCY,
    handlers: {
      deliver: async ({ deliveryId, round }, { job, log }) => {
        const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        const outcome = await attemptDelivery(deps.database, { deliveryId, round, lastAttempt }, options);
        switch (outcome.kind) {
          case 'skipped':
          case 'delivered':
            return outcome;
          case 'gone':
            throw new UnrecoverableError(`delivery ${deliveryId} refused: ${outcome.reason}`);
          case 'retry':
            if (outcome.gaveUp) log.warn({ deliveryId, attempt: outcome.attempt }, 'delivery given up');
            throw new Error(`delivery ${deliveryId} attempt ${outcome.attempt} failed: ${outcome.reason}`);
        }
      },
    },
  };
};
