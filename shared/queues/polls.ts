import type { JobsOptions } from 'bullmq';
import { Type } from 'typebox';
import { defineQueue, retrying, Unread } from './define.js';

/** How long a tally waits for more votes before recounting: a burst of votes becomes one recount. */
export const TALLY_DEBOUNCE_MS = 500;

/** Tally jobs are debounced per poll: a burst of votes becomes one recount. */
export const pollsQueue = defineQueue({
  name: 'polls',
  jobs: { tally: { pollId: Type.Integer({ minimum: 1 }) } },
  results: { tally: Unread },
  defaultJobOptions: { ...retrying(8, 500), removeOnComplete: { age: 600, count: 1000 } },
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
