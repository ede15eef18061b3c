import { UnrecoverableError } from 'bullmq';
import type { Config } from '../../shared/config.js';
import type { NewsletterRepository } from '../../shared/db/repositories/newsletter.js';
import { MailError, type Mailer } from '../../shared/mail/transport.js';
import { digestsSent } from '../../shared/metrics.js';
import { digestMail, newsletterLinks } from '../../shared/newsletter/messages.js';
import { parsePeriod } from '../../shared/newsletter/period.js';
import type { NewsletterTokens } from '../../shared/newsletter/tokens.js';
import type { PayloadOf } from '../../shared/queues/define.js';
import type { newsletterQueue } from '../../shared/queues/newsletter.js';
import type { JobContext } from '../types.js';

type SendPayload = PayloadOf<typeof newsletterQueue, 'send-digest'>;

export interface SendDigestDeps {
  config: Pick<Config, 'publicUrl' | 'newsletter'>;
  repo: NewsletterRepository;
  mailer: Mailer;
  tokens: () => Promise<NewsletterTokens>;
}

/**
 * Sends one subscriber's digest for one period, at most once. The digest_sends row is inserted as `sending`
 * before any SMTP traffic (its unique key lets one claimant through) and marked `sent` after the server's 250.
 * A retry or duplicate that finds `sending` does not send: the earlier attempt may have delivered the message
 * and died before recording it, and the spec prefers a lost digest to a double one. Only failures proven to
 * have delivered nothing (a 4xx reply, no connection at all) give the claim back for a retry.
 */
export function sendDigest(deps: SendDigestDeps) {
  const links = newsletterLinks(deps.config.publicUrl);

  return async ({ subscriberId, period: key, questionIds }: SendPayload, { log }: JobContext) => {
    const period = parsePeriod(key);
    if (!period) throw new UnrecoverableError(`malformed period ${key}`);
    const subscriber = await deps.repo.find(subscriberId);
    // Unsubscribed, bouncing or switched frequency since the fan-out: this digest is no longer wanted.
    if (!subscriber || subscriber.status !== 'confirmed' || subscriber.frequency !== period.frequency) {
      return { skipped: 'not a confirmed subscriber of this frequency' };
    }
    const existing = await deps.repo.claimSend(subscriberId, key);
    if (existing) {
      if (existing === 'sending')
        log.warn(
          { period: key, subscriberId },
          'digest claimed earlier with unknown outcome; not sent again',
        );
      return { skipped: existing === 'sending' ? 'claimed earlier, outcome unknown' : `already ${existing}` };
    }

    let handedOver = false;
    try {
      const questions = await deps.repo.questionsByIds(questionIds);
      if (questions.length === 0) {
        await deps.repo.markFailed(subscriberId, key, 'every question of the digest was deleted');
        return { skipped: 'no questions left' };
      }
      const unsubscribe = links.unsubscribe(
        (await deps.tokens()).unsubscribe({ subscriberId, email: subscriber.email }),
      );
      const mail = digestMail(subscriber.email, period, questions, { question: links.question, unsubscribe });
      handedOver = true;
      const { messageId } = await deps.mailer.send(mail);
      digestsSent.inc({ frequency: period.frequency });
      await deps.repo.markSent(subscriberId, key, messageId);
      return { sent: messageId };
    } catch (err) {
      if (!handedOver) {
        // Nothing went out (a database read failed): give the claim back and let BullMQ retry.
        await deps.repo.releaseClaim(subscriberId, key);
        throw err;
      }
      if (!(err instanceof MailError)) throw err; // recording 'sent' failed: the row stays 'sending', never resent
      return onMailError(err, subscriberId, key, deps, log);
    }
  };
}

async function onMailError(
  err: MailError,
  subscriberId: number,
  key: string,
  deps: SendDigestDeps,
  log: JobContext['log'],
): Promise<never> {
  switch (err.failure) {
    case 'transient':
    case 'config':
      // Proven undelivered: free the claim; BullMQ retries with exponential backoff.
      await deps.repo.releaseClaim(subscriberId, key);
      throw err;
    case 'rejected': {
      await deps.repo.markFailed(subscriberId, key, err.message);
      const bounce = await deps.repo.recordBounce(subscriberId, deps.config.newsletter.bounceLimit);
      log.warn(
        { subscriberId, period: key, code: err.responseCode, ...bounce },
        'digest rejected for the recipient',
      );
      throw new UnrecoverableError(`rejected for the recipient: ${err.message}`);
    }
    case 'unknown':
      log.error(
        { subscriberId, period: key, err: err.message },
        'connection lost after the message was sent; not retried',
      );
      throw new UnrecoverableError(`outcome unknown, not retried (at most once): ${err.message}`);
  }
}
