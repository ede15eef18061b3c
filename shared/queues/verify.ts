import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

/** Most addresses one bulk request (and so one job) carries. */
export const VERIFY_MAX_BATCH = 100;

/**
 * One job probes the addresses of one or more whole domains (a domain's addresses share the DNS answer, the
 * catch-all probe and the SMTP sessions; small domains are packed together). POST /bulk-verify enqueues a request's
 * jobs in one round trip and waits for them all (enqueueAllAndWait).
 */
export const verifyQueue = defineQueue({
  name: 'verify',
  jobs: {
    'verify-domains': {
      emails: Type.Array(Type.String({ maxLength: 512 }), { minItems: 1, maxItems: VERIFY_MAX_BATCH }),
      // Epoch ms after which nobody waits for the answer any more: a worker skips the job instead of probing.
      expiresAt: Type.Optional(Type.Integer({ minimum: 0 })),
    },
  },
  // Payloads and results are email addresses: keep them only as long as a waiting request or a retry needs them.
  defaultJobOptions: {
    ...retrying(2, 1000),
    removeOnComplete: { age: 600, count: 5000 },
    removeOnFail: { age: 24 * 3600, count: 1000 },
  },
});
