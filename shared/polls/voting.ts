import { pollsRepository } from '../db/repositories/polls.js';
import type { Database } from '../db/client.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { tallyJobOptions } from '../queues/polls.js';
import type { Queues } from '../queues/producer.js';
import { pollResults, type PollResults } from './results.js';
import { isClosed } from './rules.js';

export interface VoteInput {
  pollId: number;
  optionId: number;
  /** From voterId(): 'user:<id>' or 'client:<hash>'. */
  voter: string;
  requestId?: string;
}

/**
 * Casting a vote: checks the poll and option, appends (or moves) the voter's row, asks the polls worker for a
 * debounced tally, and answers exact counts that include this vote. Nothing on this path writes a shared
 * counter row, so concurrent voters of a hot poll never wait for each other.
 */
export function pollVoting(deps: { database: Database; queues: Queues; logger: Logger }) {
  const polls = pollsRepository(deps.database.db);

  async function requestTally(pollId: number, requestId?: string): Promise<void> {
    try {
      await deps.queues.enqueue('polls', 'tally', { pollId, requestId }, tallyJobOptions(pollId));
    } catch (err) {
      // The vote is committed and the answer below is counted from the votes, so the voter is told the truth;
      // the stored tally catches up with the next vote on this poll.
      deps.logger.warn({ err, pollId }, 'could not enqueue a poll tally');
    }
  }

  return {
    async vote(input: VoteInput): Promise<PollResults> {
      const poll = await polls.find(input.pollId);
      if (!poll) throw new NotFoundError(`Poll ${input.pollId} not found`);
      if (!poll.options.some((o) => o.id === input.optionId)) {
        const owner = await polls.pollOfOption(input.optionId);
        if (owner === undefined) throw new NotFoundError(`Option ${input.optionId} not found`);
        throw new ValidationError(`Option ${input.optionId} does not belong to poll ${input.pollId}`);
      }
      if (isClosed(poll.closedAt)) throw new ForbiddenError('This poll is closed');

      const outcome = await polls.cast({ ...input, allowChange: poll.allowChange });
      if (outcome === 'refused')
        throw new ConflictError('You have already voted in this poll, and it does not allow changing a vote');

      const [, counts] = await Promise.all([
        requestTally(poll.id, input.requestId),
        polls.countVotes(poll.options.map((o) => o.id)),
      ]);
      return pollResults(poll.options, (id) => counts.get(id) ?? 0);
    },
  };
}
