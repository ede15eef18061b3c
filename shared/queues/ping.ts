import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

/** A trivial queue that proves the path from an API process through Redis to a worker and back. */
export const pingQueue = defineQueue({
  name: 'ping',
  jobs: {
    // delayMs lets operators (and the shutdown tests) hold a job in flight.
    echo: {
      message: Type.String({ maxLength: 1000 }),
      delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
    },
  },
  results: {
    echo: Type.Object({ message: Type.String(), worker: Type.Integer(), attempt: Type.Integer() }),
  },
  defaultJobOptions: retrying(3, 500),
});
