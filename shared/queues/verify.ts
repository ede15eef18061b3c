import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

/** One job probes the addresses of one domain, so they share SMTP sessions. */
export const verifyQueue = defineQueue({
  name: 'verify',
  jobs: {
    'verify-domain': { emails: Type.Array(Type.String({ maxLength: 512 }), { minItems: 1, maxItems: 100 }) },
  },
  defaultJobOptions: { ...retrying(2, 1000), removeOnComplete: { age: 600 } },
});
