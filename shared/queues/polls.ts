import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

/** Tally jobs are debounced per poll: a burst of votes becomes one recount. */
export const pollsQueue = defineQueue({
  name: 'polls',
  jobs: { tally: { pollId: Type.Integer() } },
  defaultJobOptions: retrying(5, 500),
});
