import { UnrecoverableError, type Job } from 'bullmq';
import type { NewsletterRepository } from '../../shared/db/repositories/newsletter.js';
import { parsePeriod, periodBefore } from '../../shared/newsletter/period.js';
import type { PayloadOf } from '../../shared/queues/define.js';
import type { newsletterQueue } from '../../shared/queues/newsletter.js';
import { validatePayload, type Queues } from '../../shared/queues/producer.js';
import type { JobContext } from '../types.js';

/** Questions per digest: a mail one reads in a minute. */
export const DIGEST_SIZE = 10;
// Subscribers read and send jobs added per round trip; bounded so memory stays flat for any list size.
const FAN_OUT_PAGE = 500;

type BuildPayload = PayloadOf<typeof newsletterQueue, 'build-digest'>;

/** When a scheduler meant the job to run (it is created ahead, delayed); a late worker still picks the right period. */
const scheduledAt = (job: Job) => new Date(job.timestamp + (job.opts.delay ?? 0));

/**
 * Selects the period's best new questions once, then fans out one send job per confirmed subscriber of the
 * frequency. Job ids are business keys, so a retried or duplicated build (a worker killed mid-fan-out) re-adds
 * the same ids and BullMQ keeps one job each; digest_sends guards the rest.
 */
export function buildDigest(deps: { repo: NewsletterRepository; queues: Queues }) {
  return async (payload: BuildPayload, { job, log }: JobContext) => {
    const period = payload.period
      ? parsePeriod(payload.period)
      : periodBefore(payload.frequency, scheduledAt(job));
    if (!period || period.frequency !== payload.frequency) {
      throw new UnrecoverableError(`period ${payload.period} is not a ${payload.frequency} period`);
    }
    const questions = await deps.repo.bestQuestions(period.start, period.end, DIGEST_SIZE);
    if (questions.length === 0) {
      log.info({ period: period.key }, 'no new questions in the period; no digest');
      return { period: period.key, subscribers: 0, skipped: 'no new questions' };
    }
    const questionIds = questions.map((q) => q.id);
    let after = 0;
    let subscribers = 0;
    for (;;) {
      const ids = await deps.repo.confirmedPage(period.frequency, after, FAN_OUT_PAGE);
      if (ids.length === 0) break;
      const jobs = ids.map((subscriberId) => {
        const data = {
          subscriberId,
          period: period.key,
          questionIds,
          ...(payload.requestId ? { requestId: payload.requestId } : {}),
        };
        validatePayload('newsletter', 'send-digest', data);
        return { name: 'send-digest', data, opts: { jobId: `digest-${period.key}-${subscriberId}` } };
      });
      await deps.queues.queue('newsletter').addBulk(jobs);
      subscribers += ids.length;
      after = ids[ids.length - 1]!;
    }
    log.info({ period: period.key, subscribers, questions: questionIds.length }, 'digest fanned out');
    return { period: period.key, subscribers, questionIds };
  };
}
