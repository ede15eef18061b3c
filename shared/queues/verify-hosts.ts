import { Type } from 'typebox';
import { defineQueue, retrying } from './define.js';

/** Host names are DNS names: at most 253 octets. */
const HOST_NAME_MAX = 253;

/**
 * The verify-hosts queue: one `drain` job per MX host with pending work is that host's ownership
 * (shared/verification/host-dispatch.ts). Added with deduplication `{ id: host, keepLastIfActive: true }`, so work
 * added while the active job finishes gets a waiting one; a job that starts while another live job owns the host
 * (host-queue.ts) ends at once, so never two processes drain one host. Its own queue (and Worker, created by the verifier of each verify worker
 * process), so the requests waiting for replies never take the slots the drainers need. Nobody waits for a drain
 * job itself: the answers travel per item (host-replies.ts); the result is kept for operators.
 */
export const verifyHostsQueue = defineQueue({
  name: 'verify-hosts',
  jobs: {
    drain: { host: Type.String({ minLength: 1, maxLength: HOST_NAME_MAX }) },
  },
  results: {
    drain: Type.Object({
      answered: Type.Integer({ minimum: 0 }),
      expired: Type.Integer({ minimum: 0 }),
      restored: Type.Integer({ minimum: 0 }),
      ownedElsewhere: Type.Boolean(),
    }),
  },
  // A failed attempt's items stay in flight and go back to pending at the next one; a requester still waiting
  // re-adds the job if all attempts failed.
  defaultJobOptions: {
    ...retrying(3, 200),
    removeOnComplete: { age: 60, count: 1000 },
    removeOnFail: { age: 24 * 3600, count: 1000 },
  },
});
