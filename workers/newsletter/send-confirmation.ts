import { UnrecoverableError } from 'bullmq';
import type { Config } from '../../shared/config.js';
import type { NewsletterRepository } from '../../shared/db/repositories/newsletter.js';
import { MailError, type Mailer } from '../../shared/mail/transport.js';
import { confirmationMail, newsletterLinks } from '../../shared/newsletter/messages.js';
import type { NewsletterTokens } from '../../shared/newsletter/tokens.js';
import type { PayloadOf } from '../../shared/queues/define.js';
import type { newsletterQueue } from '../../shared/queues/newsletter.js';
import type { JobContext } from '../types.js';

type ConfirmationPayload = PayloadOf<typeof newsletterQueue, 'send-confirmation'>;

/**
 * Mails the double opt-in link. A second confirmation email is harmless (following either link confirms), so
 * unlike digests this retries on every failure that is not a permanent rejection.
 */
export function sendConfirmation(deps: {
  config: Pick<Config, 'publicUrl'>;
  repo: NewsletterRepository;
  mailer: Mailer;
  tokens: () => Promise<NewsletterTokens>;
}) {
  const links = newsletterLinks(deps.config.publicUrl);
  return async ({ subscriberId, frequency }: ConfirmationPayload, { log }: JobContext) => {
    const subscriber = await deps.repo.find(subscriberId);
    // Unsubscribed after asking (or the row is gone): the request was withdrawn.
    if (!subscriber || subscriber.status === 'unsubscribed' || subscriber.status === 'bouncing') {
      return { skipped: 'no longer requested' };
    }
    const token = (await deps.tokens()).confirm({ subscriberId, email: subscriber.email, frequency });
    try {
      const { messageId } = await deps.mailer.send(
        confirmationMail(subscriber.email, frequency, links.confirm(token)),
      );
      return { sent: messageId };
    } catch (err) {
      if (err instanceof MailError && (err.failure === 'rejected' || err.failure === 'config')) {
        log.warn({ subscriberId, code: err.responseCode }, 'confirmation email rejected');
        throw new UnrecoverableError(err.message);
      }
      throw err;
    }
  };
}
