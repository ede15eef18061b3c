import { pollsRepository } from '../../shared/db/repositories/polls.js';
import type { ProcessorFactory } from '../types.js';

/**
 * Stores each option's count, recounted from the votes. Jobs are debounced per poll (shared/queues/polls.ts), and
 * a recount is idempotent, so a retried or duplicated job only recounts again. A poll deleted meanwhile is
 * skipped rather than failed.
 */
export const pollsProcessor: ProcessorFactory<'polls'> = (deps) => {
  const polls = pollsRepository(deps.database.db);
  return {
    // Tallies of different polls run side by side; one poll's tallies are serialised by a row lock anyway.
    concurrency: 8,
    handlers: {
      tally: async ({ pollId }, { log }) => {
        const result = await polls.recount(pollId);
        if (!result) {
          log.info({ pollId }, 'poll is gone; tally skipped');
          return { skipped: 'poll not found' };
        }
        log.debug({ pollId, ...result }, 'poll tallied');
        return result;
      },
    },
  };
};
