import { pollsRepository } from '../../shared/db/repositories/polls.js';
import type { ProcessorFactory } from '../types.js';

/**
 * Stores each option's count, recounted from the votes (after votes, and once more when a poll has closed). Jobs are debounced per poll (shared/queues/polls.ts), and
 * a recount is idempotent, so a retried or duplicated job only recounts again. A poll deleted meanwhile is
 * skipped rather than failed.
 */
/** Closed polls tallied per run at most: the next run, moments later, takes the rest. */
const CLOSING_BATCH = 500;

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
      // The final tally of polls that closed since their last one; a retried run finds only those still left.
      close: async (_payload, { log }) => {
        const due = await polls.closedSinceTally(CLOSING_BATCH);
        for (const pollId of due) await polls.recount(pollId);
        if (due.length > 0) log.info({ polls: due.length }, 'closed polls tallied');
        return { tallied: due.length };
      },
    },
  };
};
