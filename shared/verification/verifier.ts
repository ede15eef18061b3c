import { randomBytes } from 'node:crypto';
import { domainToUnicode } from 'node:url';
import { createMailHostResolver, type MailHostLookup } from './dns.js';
import { addressFlags } from './flags.js';
import { createMxSemaphore } from './mx-semaphore.js';
import { probeDomain, type ProbeOutcome } from './smtp-probe.js';
import { parseAddress, type ParsedAddress, type SyntaxFailure } from './syntax.js';
import { decide } from './verdict.js';
import type { VerificationResult, VerifierOptions } from './types.js';

/**
 * The verification engine: syntax → DNS → SMTP probe → verdict. Addresses of one domain share
 * the DNS answer, the catch-all probe and the SMTP sessions. Every input gets one result, in
 * input order, duplicates included.
 */

// Ten new connections a second per MX host at most: far below what providers throttle.
const DEFAULT_PACING_MS = 100;

export interface Verifier {
  verify(email: string): Promise<VerificationResult>;
  /** Meant for addresses of one domain (they share SMTP sessions); mixed domains also work. */
  verifyDomainGroup(emails: string[]): Promise<VerificationResult[]>;
}

export interface DomainGroup {
  /** ASCII domain; '' for the entries with bad syntax, which need no network at all. */
  domain: string;
  emails: string[];
  /** Positions of `emails` in the input, to put results back in order. */
  indexes: number[];
}

/** Splits a batch by (ASCII) domain, keeping input positions. */
export function groupByDomain(emails: readonly string[]): DomainGroup[] {
  const groups = new Map<string, DomainGroup>();
  emails.forEach((email, index) => {
    const parsed = parseAddress(email);
    const domain = parsed.ok ? parsed.domain : '';
    const group = groups.get(domain) ?? { domain, emails: [], indexes: [] };
    group.emails.push(email);
    group.indexes.push(index);
    groups.set(domain, group);
  });
  return [...groups.values()];
}

export function createVerifier(opts: VerifierOptions): Verifier {
  const cacheMaxTtlSec = opts.cacheMaxTtlSec ?? 3600;
  const resolver = createMailHostResolver({ ...opts, cacheMaxTtlSec });
  const semaphore = createMxSemaphore({
    redis: opts.redis,
    keyPrefix: opts.keyPrefix,
    limit: opts.mxConcurrency,
    // A slot outlives the probe that took it only if its worker died: then it expires.
    leaseMs: opts.probeTimeoutMs + 2 * opts.smtpTimeoutMs,
    pacingMs: opts.mxPacingMs ?? DEFAULT_PACING_MS,
  });
  const catchAllKey = (domain: string): string => `${opts.keyPrefix}catch-all:${domain}`;

  async function verifyDomainGroup(emails: string[]): Promise<VerificationResult[]> {
    const started = performance.now();
    const parsed = emails.map((e) => parseAddress(e));
    const results: VerificationResult[] = new Array<VerificationResult>(emails.length);
    const byDomain = new Map<string, number[]>();
    parsed.forEach((p, i) => {
      if (!p.ok) results[i] = badSyntax(p, started);
      else byDomain.set(p.domain, [...(byDomain.get(p.domain) ?? []), i]);
    });
    await Promise.all(
      [...byDomain].map(async ([domain, indexes]) => {
        const items = indexes.map((i) => parsed[i] as ParsedAddress);
        const groupResults = await verifyOneDomain(domain, items, started);
        indexes.forEach((inputIndex, k) => (results[inputIndex] = groupResults[k]!));
      }),
    );
    return results;
  }

  async function verifyOneDomain(
    domain: string,
    items: ParsedAddress[],
    started: number,
  ): Promise<VerificationResult[]> {
    const dns = await resolver.lookup(domain);
    if (dns.kind !== 'mx' && dns.kind !== 'implicit')
      return items.map((p) => build(p, dns, null, null, started));

    const targets = [
      ...new Map(items.map((p) => [p.address, { address: p.address, smtputf8: p.smtputf8 }])).values(),
    ];
    const cached = await opts.redis.get(catchAllKey(domain));
    const knownCatchAll = cached === null ? null : cached === '1';
    const report = await probeDomain(
      dns.hosts,
      targets,
      knownCatchAll === null ? randomAddress(domain) : null,
      {
        ...opts,
        semaphore,
      },
    );
    let catchAll = knownCatchAll;
    const probeKind = report.catchAllProbe?.kind;
    if (probeKind === 'accepted') catchAll = true;
    else if (probeKind === 'mailbox_not_found' || probeKind === 'mailbox_disabled') catchAll = false;
    // Only a clear answer is remembered: a deferral says nothing about the domain's policy.
    if (knownCatchAll === null && catchAll !== null) {
      await opts.redis.set(catchAllKey(domain), catchAll ? '1' : '0', 'EX', cacheMaxTtlSec);
    }
    opts.logger?.debug(
      { domain, addresses: targets.length, sessions: report.sessions, catchAll },
      'domain verified',
    );
    return items.map((p) => build(p, dns, report.outcomes.get(p.address) ?? null, catchAll, started));
  }

  return {
    verify: async (email) => (await verifyDomainGroup([email]))[0]!,
    verifyDomainGroup,
  };
}

/**
 * The result of an address the caller stopped waiting for (its group missed the request deadline, or the
 * worker gave up on it): `unknown` with the given reason. DNS and SMTP facts are not known, so `mx_found`
 * is false and `mx_record` is ''; the flags come from the address itself. Bad syntax still gives `invalid`.
 */
export function unfinishedResult(
  email: string,
  reason: 'timeout' | 'temporary_failure',
  durationMs: number,
): VerificationResult {
  const started = performance.now() - durationMs;
  const p = parseAddress(email);
  if (!p.ok) return badSyntax(p, started);
  const flags = addressFlags(p.local, p.domain);
  const outcome: ProbeOutcome = { kind: reason, reply: null, host: '', detail: 'not finished' };
  const verdict = decide({
    syntaxValid: true,
    dns: { kind: 'mx', hosts: [] },
    outcome,
    catchAll: null,
    flags,
  });
  return {
    email: p.email,
    status: verdict.status,
    syntax_valid: true,
    mx_found: false,
    smtp_valid: false,
    ...flags,
    is_catch_all: false,
    domain: p.domainUnicode,
    mx_record: '',
    score: verdict.score,
    reason: verdict.reason,
    smtp_code: null,
    smtp_message: null,
    duration_ms: Math.round(durationMs),
  };
}

function build(
  p: ParsedAddress,
  dns: MailHostLookup,
  outcome: ProbeOutcome | null,
  catchAll: boolean | null,
  started: number,
): VerificationResult {
  const flags = addressFlags(p.local, p.domain);
  const verdict = decide({ syntaxValid: true, dns, outcome, catchAll, flags });
  const hasHosts = dns.kind === 'mx' || dns.kind === 'implicit';
  const reply = outcome?.reply ?? null;
  return {
    email: p.email,
    status: verdict.status,
    syntax_valid: true,
    mx_found: hasHosts,
    smtp_valid: outcome?.kind === 'accepted',
    ...flags,
    is_catch_all: catchAll === true,
    domain: p.domainUnicode,
    mx_record: outcome?.host || (hasHosts ? (dns.hosts[0]?.host ?? '') : ''),
    score: verdict.score,
    reason: verdict.reason,
    smtp_code: reply?.code ?? null,
    smtp_message: reply ? [reply.enhanced, reply.text].filter(Boolean).join(' ') : null,
    duration_ms: Math.round(performance.now() - started),
  };
}

function badSyntax(p: SyntaxFailure, started: number): VerificationResult {
  const domain = p.domain.startsWith('[') ? p.domain : domainToUnicode(p.domain) || p.domain;
  const flags = p.domain && !p.domain.startsWith('[') ? addressFlags('', p.domain) : null;
  return {
    email: p.email,
    status: 'invalid',
    syntax_valid: false,
    mx_found: false,
    smtp_valid: false,
    is_disposable: flags?.is_disposable ?? false,
    is_role_based: false,
    is_free_provider: flags?.is_free_provider ?? false,
    is_catch_all: false,
    domain,
    mx_record: '',
    score: 0,
    reason: 'bad_syntax',
    smtp_code: null,
    smtp_message: null,
    duration_ms: Math.round(performance.now() - started),
  };
}

/** A local part no person has: if the server accepts it, it accepts anything. */
function randomAddress(domain: string): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const local = [...randomBytes(18)].map((b) => letters[b % letters.length]).join('');
  return `${local}@${domain}`;
}
