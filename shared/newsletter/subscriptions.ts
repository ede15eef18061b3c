import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { newsletterRepository } from '../db/repositories/newsletter.js';
import { ValidationError } from '../errors.js';
import type { Queues } from '../queues/producer.js';
import { createSigner, loadAppSecret } from '../secrets.js';
import { parseAddress } from '../verification/index.js';
import type { Frequency } from './frequency.js';
import { newsletterTokens, type NewsletterTokens } from './tokens.js';

/**
 * What the newsletter endpoints do. Every answer is the same whatever the address's state, so the endpoint
 * never tells a caller whether someone is subscribed; the mailbox owner learns it from the email.
 */

export const MESSAGES = {
  subscribed: 'Thank you. Please check your inbox: we have sent you an email to confirm your subscription.',
  unsubscribed: 'If this address was subscribed, it will no longer receive the newsletter.',
  confirmed: 'Your subscription is confirmed.',
  unsubscribedByLink: 'You have been unsubscribed and will receive no more digests.',
} as const;

// Repeated subscribe requests for one address and frequency within this window send one confirmation email,
// so the endpoint cannot be used to flood a mailbox.
const CONFIRMATION_DEDUP_MS = 10 * 60_000;

/** Trimmed, lower-cased address, or a ValidationError. Quoted local parts and single-label domains are refused. */
export function normaliseEmail(input: string): string {
  const parsed = parseAddress(input);
  if (!parsed.ok || parsed.quoted || !parsed.domain.includes('.'))
    throw new ValidationError('email must be a valid email address');
  return parsed.address.toLowerCase();
}

export type NewsletterDeps = { config: Pick<Config, 'appSecret'>; database: Database; queues: Queues };

/** Lazily loads the app secret (one query, first use), so building the app needs no database round trip. */
export function lazyTokens(deps: {
  config: Pick<Config, 'appSecret'>;
  database: Database;
}): () => Promise<NewsletterTokens> {
  let tokens: Promise<NewsletterTokens> | undefined;
  return () => {
    tokens ??= loadAppSecret(deps.config, deps.database).then((secret) =>
      newsletterTokens(createSigner(secret)),
    );
    tokens.catch(() => (tokens = undefined));
    return tokens;
  };
}

export function newsletterSubscriptions(deps: NewsletterDeps) {
  const repo = newsletterRepository(deps.database.db);
  const tokens = lazyTokens(deps);
  const linkError = (reason: 'invalid' | 'expired') =>
    new ValidationError(
      reason === 'expired' ? 'This link has expired; please subscribe again' : 'This link is not valid',
    );

  return {
    async subscribe(email: string, frequency: Frequency, requestId?: string): Promise<string> {
      const subscriber = await repo.requestSubscription(normaliseEmail(email), frequency);
      await deps.queues.enqueue(
        'newsletter',
        'send-confirmation',
        { subscriberId: subscriber.id, frequency, ...(requestId ? { requestId } : {}) },
        { deduplication: { id: `confirm-${subscriber.id}-${frequency}`, ttl: CONFIRMATION_DEDUP_MS } },
      );
      return MESSAGES.subscribed;
    },

    async unsubscribe(email: string): Promise<string> {
      await repo.unsubscribeByEmail(normaliseEmail(email));
      return MESSAGES.unsubscribed;
    },

    /** Throws the 400 a bad or expired confirmation link deserves; changes nothing (the GET page's check). */
    async checkConfirmToken(token: string): Promise<void> {
      const check = (await tokens()).readConfirm(token);
      if (!check.ok) throw linkError(check.reason);
    },

    async confirm(token: string): Promise<string> {
      const check = (await tokens()).readConfirm(token);
      if (!check.ok) throw linkError(check.reason);
      const { subscriberId, email, frequency } = check.claim;
      // Unsubscribed (or bouncing) since the link was sent: only a new subscribe request re-opens it.
      if (!(await repo.confirm(subscriberId, email, frequency))) throw linkError('invalid');
      return MESSAGES.confirmed;
    },

    /** Throws the 400 a bad or expired unsubscribe link deserves; changes nothing. */
    async checkUnsubscribeToken(token: string): Promise<void> {
      const check = (await tokens()).readUnsubscribe(token);
      if (!check.ok) throw linkError(check.reason);
    },

    /** Idempotent: a second click, or a link for a row deleted since, still answers success. */
    async unsubscribeWithToken(token: string): Promise<string> {
      const check = (await tokens()).readUnsubscribe(token);
      if (!check.ok) throw linkError(check.reason);
      await repo.unsubscribeById(check.claim.subscriberId, check.claim.email);
      return MESSAGES.unsubscribedByLink;
    },
  };
}

export type NewsletterSubscriptions = ReturnType<typeof newsletterSubscriptions>;
