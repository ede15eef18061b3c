import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

/** A trivial queue that proves the path from an API process through Redis to a worker and back. */
export const pingQueue = defineQueue({
  name: 'ping',
  jobs: { echo: { message: Type.String({ maxLength: 1000 }) } },
  defaultJobOptions: retrying(3, 500),
});
