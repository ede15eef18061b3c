import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature every delivery carries: `X-Agora-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
 * (the scheme Stripe made familiar). The timestamp is inside the MAC, so a receiver that rejects old timestamps
 * cannot be fed a captured request again later; `v1` names the scheme so a second one can be added beside it.
 */

export const SIGNATURE_HEADER = 'X-Agora-Signature';

/** How far a signature's time may be from the receiver's clock, by default (seconds). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const mac = (secret: string, body: string, t: number): string =>
  createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/** The header value for `body` (the exact bytes sent) signed at `t` (unix seconds). */
export function signPayload(secret: string, body: string, t: number = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${mac(secret, body, t)}`;
}

/**
 * True when `header` holds a v1 signature of `body` by `secret`, made within `toleranceSeconds` of `now`
 * (unix seconds). For receivers and tests: `body` must be the raw request body, not a re-serialised parse of it.
 */
export function verifySignature(
  secret: string,
  body: string,
  header: string | undefined,
  options: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  if (!header) return false;
  const fields = header.split(',').map((part) => part.trim().split('='));
  const t = Number(fields.find(([k]) => k === 't')?.[1]);
  if (!Number.isSafeInteger(t)) return false;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(mac(secret, body, t), 'hex');
  // Several v1 entries may be present (e.g. while a secret is rotated): any one matching is enough.
  return fields
    .filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
    .some(([, v]) => timingSafeEqual(Buffer.from(v!, 'hex'), expected));
}
