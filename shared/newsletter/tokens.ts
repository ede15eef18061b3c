import type { Frequency } from './frequency.js';

/**
 * Signed newsletter links. A token names the subscriber row and the address it was issued for (so a row
 * deleted and re-created for another address never honours an old link) and an expiry; confirmation tokens
 * also carry the frequency being confirmed, so re-subscribing with a new frequency takes effect only when the
 * mailbox owner clicks. Purposes differ, so a confirmation token cannot unsubscribe and vice versa.
 */

export const CONFIRM_TTL_SECONDS = 7 * 24 * 3600;
// Long enough that any digest in a reader's mailbox still unsubscribes (monthly digests carry a fresh one).
export const UNSUBSCRIBE_TTL_SECONDS = 365 * 24 * 3600;

const CONFIRM = 'newsletter-confirm';
const UNSUBSCRIBE = 'newsletter-unsubscribe';

export interface Signer {
  sign(purpose: string, payload: string): string;
  verify(purpose: string, token: string): string | null;
}

export interface ConfirmClaim {
  subscriberId: number;
  email: string;
  frequency: Frequency;
}

export interface UnsubscribeClaim {
  subscriberId: number;
  email: string;
}

export type TokenCheck<T> = { ok: true; claim: T } | { ok: false; reason: 'invalid' | 'expired' };

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function newsletterTokens(signer: Signer) {
  const read = (purpose: string, token: string): TokenCheck<Record<string, unknown>> => {
    const payload = signer.verify(purpose, token);
    if (payload === null) return { ok: false, reason: 'invalid' };
    let data: unknown;
    try {
      data = JSON.parse(payload);
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (typeof data !== 'object' || data === null) return { ok: false, reason: 'invalid' };
    const claim = data as Record<string, unknown>;
    if (!Number.isInteger(claim.s) || typeof claim.e !== 'string' || !Number.isInteger(claim.x))
      return { ok: false, reason: 'invalid' };
    if ((claim.x as number) < nowSeconds()) return { ok: false, reason: 'expired' };
    return { ok: true, claim };
  };

  return {
    confirm(claim: ConfirmClaim, ttlSeconds = CONFIRM_TTL_SECONDS): string {
      const payload = {
        s: claim.subscriberId,
        e: claim.email,
        f: claim.frequency,
        x: nowSeconds() + ttlSeconds,
      };
      return signer.sign(CONFIRM, JSON.stringify(payload));
    },
    unsubscribe(claim: UnsubscribeClaim, ttlSeconds = UNSUBSCRIBE_TTL_SECONDS): string {
      return signer.sign(
        UNSUBSCRIBE,
        JSON.stringify({ s: claim.subscriberId, e: claim.email, x: nowSeconds() + ttlSeconds }),
      );
    },
    readConfirm(token: string): TokenCheck<ConfirmClaim> {
      const read_ = read(CONFIRM, token);
      if (!read_.ok) return read_;
      const { s, e, f } = read_.claim;
      if (f !== 'daily' && f !== 'weekly' && f !== 'monthly') return { ok: false, reason: 'invalid' };
      return { ok: true, claim: { subscriberId: s as number, email: e as string, frequency: f } };
    },
    readUnsubscribe(token: string): TokenCheck<UnsubscribeClaim> {
      const read_ = read(UNSUBSCRIBE, token);
      if (!read_.ok) return read_;
      return { ok: true, claim: { subscriberId: read_.claim.s as number, email: read_.claim.e as string } };
    },
  };
}

export type NewsletterTokens = ReturnType<typeof newsletterTokens>;
