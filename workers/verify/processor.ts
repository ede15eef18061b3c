import { dispatchTimersOf } from '../../shared/verification/dispatch-timers.js';
import { createVerifier } from '../../shared/verification/index.js';
import { verifierOptionsFrom } from '../../shared/verification/service.js';
import type { ProcessorFactory } from '../types.js';

/**
 * The verify queue. One verifier per worker process, created here. Its requests reach each MX host through that
 * host's job in the verify-hosts queue (shared/verification/host-dispatch.ts), and the verifier serves host jobs
 * itself, so any number of these processes probe side by side with one process per mail host at a time and never
 * more than VERIFY_MX_CONCURRENCY connections to it. close() lets its running host jobs answer what they took
 * and says goodbye to their SMTP sessions.
 *
 * Concurrency is VERIFY_WORKER_CONCURRENCY (32): a job mostly waits on DNS and on its hosts' replies, so many
 * overlap on one core; host jobs have their own slots, so waiting requests never starve the drainers.
 */
export const verifyProcessor: ProcessorFactory<'verify'> = (deps) => {
  const log = deps.logger.child({ component: 'verify' });
  const timers = dispatchTimersOf(deps.config);
  const verifier = createVerifier(verifierOptionsFrom(deps.config, deps.redis, log));
  return {
    close: async () => verifier.close(),
    concurrency: deps.config.verify.workerConcurrency,
    // Short locks, renewed by BullMQ while this process lives: a killed worker's jobs are taken over by another
    // within VERIFY_FAILOVER_MS and a half, well before the request's deadline (WORKER_LOCK_MS would be 30-60 s).
    lock: { durationMs: timers.jobLockMs, stalledIntervalMs: timers.stalledIntervalMs },
    handlers: {
      'verify-domains': async ({ emails, expiresAt, maxAgeSec }, { log: jobLog }) => {
        // The request that enqueued this has already answered (timeout): probing now only delays fresher jobs.
        // Taken within the answer margin, every domain would be answered unknown/timeout anyway.
        if (expiresAt !== undefined && Date.now() > expiresAt - timers.answerMarginMs) {
          jobLog.info('verify job expired before a worker took it; skipped');
          return { skipped: 'expired' };
        }
        jobLog.debug({ emails: emails.length }, 'verifying domains');
        // Redis errors are thrown by the engine: the job is retried (BullMQ backoff), never answered half-done.
        // A domain still probing just before the request's deadline answers unknown/timeout, so the job's other
        // domains reach the waiting request in time.
        return verifier.verifyDomainGroup(
          emails,
          expiresAt === undefined ? undefined : expiresAt - timers.answerMarginMs,
          { maxAgeSec },
        );
      },
    },
  };
};
