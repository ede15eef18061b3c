import type { MailHostLookup } from './dns.js';
import type { AddressFlags } from './flags.js';
import type { ProviderRule } from './providers.js';
import type { ProbeOutcome } from './smtp-probe.js';
import type { VerificationReason, VerificationStatus } from './types.js';

/**
 * Status, reason and score from the evidence, by the precedence of DESIGN.md: invalid beats
 * risky, risky beats unknown (risky needs an accepting server), unknown beats valid.
 *
 * Score bands never overlap, so sorting by score never contradicts the status:
 *   invalid 0–10 · unknown 20–39 · risky 40–79 · valid 80–100
 * Within a band the score falls with each piece of adverse evidence (docs/verification.md).
 */

export interface Evidence {
  syntaxValid: boolean;
  dns: MailHostLookup | null;
  outcome: ProbeOutcome | null;
  /** true/false from the random-address RCPT (or cache); null when it could not be told. */
  catchAll: boolean | null;
  flags: AddressFlags;
  /** A domain the typed one likely slipped from, that receives mail (typo.ts); only asked when this one does not or
   * is a known typo-squat. */
  suggestedDomain?: string | null;
  /** The typed domain is a known typo-squat (typo.ts): it has mail hosts, but they are a squatter's. */
  typoSquat?: boolean;
  /** The provider table's rule for the mail host that answered (providers.ts), if any. */
  provider?: ProviderRule | null;
}

export interface Verdict {
  status: VerificationStatus;
  reason: VerificationReason;
  score: number;
}

export const SCORE_BANDS: Record<VerificationStatus, readonly [number, number]> = {
  invalid: [0, 10],
  unknown: [20, 39],
  risky: [40, 79],
  valid: [80, 100],
};

// Penalties inside the unknown band: how little the failure tells about the mailbox.
// Greylisting proves a live, careful server; a refused connection proves nothing.
const UNKNOWN_PENALTY: Partial<Record<VerificationReason, number>> = {
  greylisted: 0,
  temporary_failure: 4,
  timeout: 9,
  blocked: 9,
  smtputf8_unsupported: 9,
  rejected: 12,
  connection_failed: 14,
  dns_error: 14,
  private_mx: 19,
};

export function decide(e: Evidence): Verdict {
  if (!e.syntaxValid) return invalid('bad_syntax', 0);
  const dns = e.dns;
  if (dns === null || dns.kind === 'error') return unknown('dns_error', e.flags);
  // A domain without mail, or a known typo-squat, whose near twin has mail: the user most likely mistyped
  // (did_you_mean says which). Mail to a squat reaches the squatter, never the person: as undeliverable as none.
  const receivesMail = dns.kind === 'mx' || dns.kind === 'implicit';
  if (e.suggestedDomain && (!receivesMail || e.typoSquat)) return invalid('possible_typo', 0);
  if (dns.kind === 'nxdomain') return invalid('nxdomain', 0);
  if (dns.kind === 'null_mx') return invalid('null_mx', 0);
  if (dns.kind === 'no_mail_host') return invalid('no_mx', 0);

  const kind = e.outcome?.kind ?? 'connection_failed';
  // The provider table: answers of these providers are known not to mean what they say.
  const rcpt = e.provider?.rcpt;
  if (rcpt === 'refusals_unreliable' && (kind === 'mailbox_not_found' || kind === 'mailbox_disabled'))
    return unknown('unreliable_provider', e.flags);
  // SMTP refusals can be wrong (anti-harvesting setups), DNS facts cannot: slightly above 0.
  if (kind === 'mailbox_not_found') return invalid('mailbox_not_found', 5);
  // A disabled mailbox is sometimes re-enabled.
  if (kind === 'mailbox_disabled') return invalid('mailbox_disabled', 10);

  if (kind === 'mailbox_full') return risky('mailbox_full', e, true);
  if (kind === 'accepted') {
    const { is_disposable, is_role_based } = e.flags;
    if (is_disposable) return risky('disposable', e, false);
    if (rcpt === 'accepts_all') return risky('accept_all_provider', e, false);
    if (e.catchAll === true) return risky('catch_all', e, false);
    if (is_role_based) return risky('role_based', e, false);
    return valid(e, dns.kind === 'implicit');
  }
  return unknown(kind, e.flags);
}

function invalid(reason: VerificationReason, score: number): Verdict {
  return { status: 'invalid', reason, score };
}

function unknown(reason: VerificationReason, flags: AddressFlags): Verdict {
  const score =
    39 - (UNKNOWN_PENALTY[reason] ?? 12) - (flags.is_disposable ? 5 : 0) - (flags.is_role_based ? 2 : 0);
  return { status: 'unknown', reason, score: clamp(score, SCORE_BANDS.unknown) };
}

function risky(reason: VerificationReason, e: Evidence, full: boolean): Verdict {
  const score =
    79 -
    (full ? 25 : 0) -
    (e.flags.is_disposable ? 20 : 0) -
    (e.catchAll === true ? 10 : 0) -
    (e.flags.is_role_based ? 5 : 0);
  return { status: 'risky', reason, score: clamp(score, SCORE_BANDS.risky) };
}

function valid(e: Evidence, implicitMx: boolean): Verdict {
  // An untold catch-all status leaves "accepted" weaker; so does mail served by a bare A record.
  const score = 100 - (e.catchAll === null ? 10 : 0) - (implicitMx ? 5 : 0);
  return { status: 'valid', reason: 'accepted', score: clamp(score, SCORE_BANDS.valid) };
}

function clamp(value: number, [min, max]: readonly [number, number]): number {
  return Math.max(min, Math.min(max, Math.round(value)));
}
