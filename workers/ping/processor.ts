import { setTimeout } from 'node:timers/promises';
import type { ProcessorFactory } from '../types.js';

/** Answers the echo job: the smallest proof that producers, Redis and workers are wired. */
export const pingProcessor: ProcessorFactory<'ping'> = () => ({
  concurrency: 4,
  handlers: {
    echo: async ({ message, delayMs }, { job, log }) => {
      log.info('echo');
      if (delayMs) await setTimeout(delayMs);
      return { message, worker: process.pid, attempt: job.attemptsMade + 1 };
    },
  },
});
