import { newsletterRepository } from '../../shared/db/repositories/newsletter.js';
import { createMailer } from '../../shared/mail/transport.js';
import { lazyTokens } from '../../shared/newsletter/subscriptions.js';
import type { ProcessorFactory } from '../types.js';
import { buildDigest } from './build-digest.js';
import { sendConfirmation } from './send-confirmation.js';
import { sendDigest } from './send-digest.js';

/**
 * The newsletter queue: confirmations, digest builds and digest sends. The limiter paces every job of the
 * queue across all workers (BullMQ keeps it in Redis) at NEWSLETTER_SEND_PER_SECOND, which is what a mail
 * provider's sending quota is expressed in; concurrency only hides SMTP round trips under that pace.
 */
export const newsletterProcessor: ProcessorFactory<'newsletter'> = (deps) => {
  const mailer = createMailer(deps.config, deps.logger);
  const repo = newsletterRepository(deps.database.db);
  const tokens = lazyTokens(deps);
  const shared = { config: deps.config, repo, mailer, tokens };
  return {
    concurrency: 8,
    limiter: { max: deps.config.newsletter.sendPerSecond, duration: 1000 },
    handlers: {
      'send-confirmation': sendConfirmation(shared),
      'build-digest': buildDigest({ repo, queues: deps.queues }),
      'send-digest': sendDigest(shared),
    },
    close: async () => mailer.close(),
  };
};
