import type { JobsOptions } from 'bullmq';
import { Type } from 'typebox';
import { defineQueue, retrying, Unread } from './define.js';

/** How long a tally waits for more votes before recounting: a burst of votes becomes one recount. */
export const TALLY_DEBOUNCE_MS = 500;

/** How often the polls that have closed since their last tally get their final one (and poll.closed). */
export const POLL_CLOSING_EVERY_MS = 15_000;

/**
 * Tally jobs are debounced per poll: a burst of votes becomes one recount. `close` tallies the polls whose
 * closing time has passed since their last tally: no vote asks for that one, and its recount is what fires the
 * poll.closed webhook event (migration 0022).
 */
export const pollsQueue = defineQueue({
  name: 'polls',
  jobs: { tally: { pollId: Type.Integer({ minimum: 1 }) }, close: {} },
  results: { tally: Unread, close: Unread },
  defaultJobOptions: { ...retrying(8, 500), removeOnComplete: { age: 600, count: 1000 } },
  schedulers: () => [
    { id: 'polls-close', job: 'close', payload: {}, repeat: { every: POLL_CLOSING_EVERY_MS } },
  ],
});

/**
 * One pending tally per poll. While a tally waits (delayed), more votes add nothing: it has not counted yet and
 * will see them. While a tally runs, its count may already be taken, so `keepLastIfActive` stores one follow-up
 * that BullMQ adds when the running job finishes; the last vote is therefore always followed by a recount that
 * starts after it was committed (votes are committed before they are enqueued).
 */
export const tallyJobOptions = (pollId: number): JobsOptions => ({
  delay: TALLY_DEBOUNCE_MS,
  deduplication: { id: `tally-${pollId}`, keepLastIfActive: true },
});
