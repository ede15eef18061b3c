import { domainToUnicode } from 'node:url';
import { createMailHostResolver, mailHostNames, type MailHostLookup } from './dns.js';
import { duplicateConnection } from '../redis.js';
import { createFactCache } from './fact-cache.js';
import { addressFlags } from './flags.js';
import { DEFAULT_FAILOVER_MS, dispatchTimers } from './dispatch-timers.js';
import { createHostDispatch } from './host-dispatch.js';
import type { HostLane } from './host-queue.js';
import type { HostReply } from './host-replies.js';
import { createHostSessions, type SessionPool } from './host-sessions.js';
import { probeDomain, randomAddress, type ProbeOutcome, type ProbeTarget } from './smtp-probe.js';
import { parseAddress, type ParsedAddress, type SyntaxFailure } from './syntax.js';
import { providerRuleFor } from './providers.js';
import { createResultCache, type ReadOptions } from './result-cache.js';
import { createTypoSuggester } from './typo.js';
import type { HostRequest } from './host-dispatch.js';
import { decide } from './verdict.js';
import type { VerificationResult, VerifierOptions } from './types.js';

/**
 * The verification engine: syntax → DNS → SMTP probe → verdict. Addresses of one domain share
 * the DNS answer, the catch-all probe and the SMTP sessions. Every input gets one result, in
 * input order, duplicates included.
 */

// Ten new connections a second per MX host at most: far below what providers throttle.
const DEFAULT_PACING_MS = 100;
// Host jobs one verifier drains at once (VERIFY_HOST_CONCURRENCY): each mostly waits on SMTP replies, and a job
// lingers after its work, so with fewer slots than hosts that have work, hosts wait for slots while their
// connections could be busy (docs/benchmarks.md, "Host jobs per verifier"). At most 2 sockets each.
const DEFAULT_DRAIN_CONCURRENCY = 256;
// The replies a new SMTP session costs besides its RCPTs (greeting, EHLO, MAIL FROM, QUIT): a list's work for a host is
// split over another connection only in shares at least this big.
const SESSION_OVERHEAD_REPLIES = 4;
// How long a verdict is reused for the same address unless the request asks for fresher (VERIFY_RESULT_TTL_MS).
const DEFAULT_RESULT_TTL_MS = 3_600_000;

/**
 * Per-request choices: `maxAgeSec` is the request's `max_age` (see result-cache.ts); `lane` says whose work it is
 * at the MX hosts, where synchronous requests go before lists (default: `sync` with an `answerBy`, else `list`).
 */
export interface VerifyRequestOptions extends ReadOptions {
  lane?: HostLane;
  /**
   * Each entry's result as soon as it is known (a host answers a batch at a time), before the group's promise
   * resolves; called once per input index, so a list stores its results while the rest is still being probed.
   */
  onResult?: (index: number, result: VerificationResult) => void;
  /**
   * Aborting stops the work no host has started yet: those addresses are never probed and get the not-answered
   * result (`isUnanswered`). What a host is probing finishes, and its answer is dropped.
   */
  signal?: AbortSignal;
}

export interface Verifier {
  verify(email: string, request?: VerifyRequestOptions): Promise<VerificationResult>;
  /**
   * Meant for the addresses of whole domains (a domain's addresses share SMTP sessions); the domains are verified in
   * parallel. With `answerBy` (epoch ms), the addresses of a domain still unanswered then answer unknown/timeout, so
   * one slow domain cannot hold back the others of its batch.
   */
  verifyDomainGroup(
    emails: string[],
    answerBy?: number,
    request?: VerifyRequestOptions,
  ): Promise<VerificationResult[]>;
  /** Finishes the host jobs it drains (saying goodbye to their SMTP sessions) and closes its connections. */
  close(): Promise<void>;
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
  // The engine's commands on a connection of their own, auto-pipelined: the scripts, replies and cache reads and
  // writes that every request, host job and lane of this process issues in one turn of the event loop leave in one
  // write (a socket write per command was the largest CPU cost per address; docs/benchmarks.md).
  const redis = duplicateConnection(opts.redis, { enableAutoPipelining: true });
  redis.on('error', () => {}); // reconnects by itself; each failing command reports it
  const resolver = createMailHostResolver({ ...opts, redis, cacheMaxTtlSec });
  const timers = dispatchTimers({
    failoverMs: opts.failoverMs ?? DEFAULT_FAILOVER_MS,
    smtpTimeoutMs: opts.smtpTimeoutMs,
    probeTimeoutMs: opts.probeTimeoutMs,
  });
  const lingerMs = opts.sessionLingerMs ?? timers.sessionLingerMs;
  const typos = createTypoSuggester(opts.typoDomains, opts.typoSquatDomains);
  const verdictCache = createResultCache({
    redis,
    keyPrefix: opts.keyPrefix,
    ttlMs: opts.resultTtlMs ?? DEFAULT_RESULT_TTL_MS,
  });
  const catchAllKey = (domain: string): string => `${opts.keyPrefix}catch-all:${domain}`;
  // Catch-all tests under way in this process, by domain: their verdicts.
  const catchAllTests = new Map<string, Promise<boolean | null>>();
  const catchAllFacts = createFactCache<boolean>(
    { redis },
    { encode: (catchAll) => (catchAll ? '1' : '0'), decode: (raw) => raw === '1' },
  );
  // A host's probes go to the one process draining its host job, so that they share its connections.
  const dispatch = createHostDispatch({
    redis: opts.redis,
    commands: redis,
    keyPrefix: opts.keyPrefix,
    queuePrefix: opts.queuePrefix ?? opts.keyPrefix.replace(/:+$/, ''),
    hostSlots: opts.hostSlots ?? false,
    timers: { ...timers, sessionLingerMs: lingerMs },
    drainConcurrency: opts.drainConcurrency ?? DEFAULT_DRAIN_CONCURRENCY,
    logger: opts.logger,
    engine: {
      lanes: opts.mxConcurrency,
      limits: {
        maxBatch: Math.max(1, opts.maxRcptPerSession - 1), // a session's RCPTs, less the catch-all probe's
        minBatch: SESSION_OVERHEAD_REPLIES,
      },
      sessions: () =>
        createHostSessions({
          smtpPort: opts.smtpPort,
          heloName: opts.heloName,
          smtpTimeoutMs: opts.smtpTimeoutMs,
          maxRcptPerSession: opts.maxRcptPerSession,
          maxPerHost: opts.mxConcurrency,
          pacingMs: opts.mxPacingMs ?? DEFAULT_PACING_MS,
          maxAgeMs: timers.maxSessionAgeMs,
        }),
      cached: (addresses, maxAgeSec) => verdictCache.read(addresses, { maxAgeSec }),
      probe: async (domain, targets, pool) =>
        Promise.all(
          (await probeTargets(domain, targets, pool)).map(
            async ({ outcome, catchAll }): Promise<HostReply> => ({
              kind: 'probed',
              outcome,
              catchAll: await catchAll,
            }),
          ),
        ),
    },
  });

  async function verifyDomainGroup(
    emails: string[],
    answerBy?: number,
    request: VerifyRequestOptions = {},
  ): Promise<VerificationResult[]> {
    const started = performance.now();
    const parsed = emails.map((e) => parseAddress(e));
    const results: VerificationResult[] = new Array<VerificationResult>(emails.length);
    const deliver = (i: number, result: VerificationResult): void => {
      if (results[i] !== undefined) return;
      results[i] = result;
      request.onResult?.(i, result);
    };
    const byDomain = new Map<string, number[]>();
    const verdicts: { address: string; result: VerificationResult }[] = [];
    // Verdicts young enough for this request cost no network at all.
    const kept = await verdictCache.read(
      [...new Set(parsed.flatMap((p) => (p.ok ? [p.address] : [])))],
      request,
    );
    parsed.forEach((p, i) => {
      if (!p.ok) {
        deliver(i, badSyntax(p, started));
        return;
      }
      const reused = kept.get(p.address);
      if (reused) {
        deliver(i, {
          ...reused,
          email: p.email,
          cached: true,
          duration_ms: Math.round(performance.now() - started),
        });
        return;
      }
      const indexes = byDomain.get(p.domain);
      if (indexes) indexes.push(i);
      else byDomain.set(p.domain, [i]);
    });
    const domains = await Promise.allSettled(
      [...byDomain].map(async ([domain, indexes]) => {
        const items = indexes.map((i) => parsed[i] as ParsedAddress);
        const verified = verifyOneDomain(
          domain,
          items,
          started,
          {
            answerBy,
            lane: request.lane ?? (answerBy === undefined ? 'list' : 'sync'),
            maxAgeSec: request.maxAgeSec,
            signal: request.signal,
          },
          (k, result) => deliver(indexes[k]!, result),
        );
        // At the deadline, what the host answered so far stands; only the rest is a timeout.
        const groupResults =
          answerBy === undefined
            ? await verified
            : await withDeadline(verified, answerBy, () =>
                items.map(
                  (p, k) =>
                    results[indexes[k]!] ?? unfinishedResult(p.email, 'timeout', performance.now() - started),
                ),
              );
        indexes.forEach((inputIndex, k) => deliver(inputIndex, groupResults[k]!));
        items.forEach((p, k) => verdicts.push({ address: p.address, result: results[indexes[k]!]! }));
      }),
    );
    // One round trip for the whole group, not one per domain. When a domain failed (Redis unreachable), the others'
    // verdicts are still kept: the job's next attempt finds them instead of probing their addresses again.
    await verdictCache.write(verdicts);
    const failed = domains.find((d) => d.status === 'rejected');
    if (failed) throw failed.reason;
    return results;
  }

  /**
   * Runs in the process draining the domain's first MX host: the probe of one batch of the domain's addresses, with
   * the catch-all probe when the domain's policy is not known yet. One evidence per target, in order.
   */
  async function probeTargets(domain: string, targets: ProbeTarget[], pool: SessionPool): Promise<Probed[]> {
    const dns = await resolver.lookup(domain); // a local cache hit: the requester has just looked it up
    if (dns.kind !== 'mx' && dns.kind !== 'implicit')
      return targets.map(() => ({ outcome: null, catchAll: null }));
    const knownCatchAll = await catchAllFacts.get(catchAllKey(domain));
    // One probe at a time tests an unknown domain for catch-all; the others meanwhile take its verdict.
    const othersTest = knownCatchAll === null ? catchAllTests.get(domain) : undefined;
    const testHere = knownCatchAll === null && !othersTest;
    let verdict = knownCatchAll;
    let announce: (verdict: boolean | null) => void = () => {};
    if (testHere) catchAllTests.set(domain, new Promise((resolve) => (announce = resolve)));
    try {
      // The drainer hands out each waiting address once, so the targets are distinct.
      const report = await probeDomain(dns.hosts, targets, testHere ? randomAddress(domain) : null, {
        ...opts,
        pool,
      });
      if (testHere) {
        verdict = catchAllVerdict(report.catchAllProbe?.kind);
        // Only a clear answer is remembered: a deferral says nothing about the domain's policy.
        if (verdict !== null) await catchAllFacts.set(catchAllKey(domain), verdict, cacheMaxTtlSec);
      }
      opts.logger?.debug(
        {
          domain,
          addresses: targets.length,
          sessions: report.sessions,
          catchAll: othersTest ? 'pending' : verdict,
        },
        'domain verified',
      );
      const catchAll = othersTest ?? verdict;
      return targets.map((t) => {
        const outcome = report.outcomes.get(t.address) ?? null;
        // An address a fallback MX answered is qualified by that host's own probe, not by the domain's.
        const fallback = outcome && report.fallbackProbes.get(outcome.host);
        return { outcome, catchAll: fallback ? catchAllVerdict(fallback.kind) : catchAll };
      });
    } finally {
      if (testHere) {
        catchAllTests.delete(domain);
        announce(verdict);
      }
    }
  }

  /** The domain's results in `items` order; each probed one is also handed to `onResult` as its host answers it. */
  async function verifyOneDomain(
    domain: string,
    items: ParsedAddress[],
    started: number,
    request: Omit<HostRequest, 'onReply'>,
    onResult: (k: number, result: VerificationResult) => void,
  ): Promise<VerificationResult[]> {
    const dns = await resolver.lookup(domain);
    if (dns.kind !== 'mx' && dns.kind !== 'implicit') {
      const suggestedDomain = dns.kind === 'error' ? null : await mailReceivingTwin(domain);
      return items.map((p) => build(p, { dns, outcome: null, catchAll: null, suggestedDomain }, started));
    }
    // A known typo-squat takes whatever is sent to harvest mail meant for its twin: its 250 says nothing about the
    // person, so it is not probed (no connection spent on it, no address of ours in its logs).
    if (typos.isKnownSquat(domain)) {
      const suggestedDomain = await mailReceivingTwin(domain);
      if (suggestedDomain)
        return items.map((p) =>
          build(p, { dns, outcome: null, catchAll: null, suggestedDomain, typoSquat: true }, started),
        );
    }
    const targets = items.map((p) => ({ address: p.address, smtputf8: p.smtputf8 }));
    const resultOf = (p: ParsedAddress, reply: HostReply | null): VerificationResult => {
      if (reply?.kind === 'cached')
        return {
          ...reply.result,
          email: p.email,
          cached: true,
          duration_ms: Math.round(performance.now() - started),
        };
      if (reply) return build(p, { dns, ...reply }, started);
      const result = build(p, { dns, ...notAnswered }, started);
      unanswered.add(result);
      return result;
    };
    const results: VerificationResult[] = new Array<VerificationResult>(items.length);
    await dispatch.run(dns.hosts[0]!.host, domain, targets, {
      ...request,
      onReply: (k, reply) => {
        results[k] = resultOf(items[k]!, reply);
        onResult(k, results[k]);
      },
    });
    return results;
  }

  /** The first likely intended domain (typo.ts) that receives mail, or null: a suggestion must be deliverable. */
  async function mailReceivingTwin(domain: string): Promise<string | null> {
    for (const candidate of typos.candidates(domain)) {
      const lookup = await resolver.lookup(candidate);
      if (lookup.kind === 'mx' || lookup.kind === 'implicit') return candidate;
    }
    return null;
  }

  return {
    verify: async (email, request) => (await verifyDomainGroup([email], undefined, request))[0]!,
    verifyDomainGroup,
    close: async () => {
      await dispatch.close();
      redis.disconnect();
    },
  };
}

/**
 * The result of an entry with bad syntax (`groupByDomain` puts them under the domain ''): it needs no network, so
 * it is graded wherever it is, without a job. Throws for an address whose syntax is valid.
 */
export function badSyntaxResult(email: string): VerificationResult {
  const p = parseAddress(email);
  if (p.ok) throw new Error('badSyntaxResult() called with a well-formed address');
  return badSyntax(p, performance.now());
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
    mx_records: [],
    did_you_mean: null,
    normalized_email: p.normalized,
    score: verdict.score,
    reason: verdict.reason,
    smtp_code: null,
    smtp_message: null,
    duration_ms: Math.round(durationMs),
    verified_at: new Date().toISOString(),
    cached: false,
  };
}

/** A probe's finding for one target; the catch-all verdict may still be coming from another probe of the domain. */
interface Probed {
  outcome: ProbeOutcome | null;
  catchAll: boolean | null | Promise<boolean | null>;
}

/**
 * Results of addresses their host's drainer did not answer in time (the host's queue was longer than the wait, or its
 * job died): `unknown` for a caller that answers now, but nothing was learnt about the mailbox, so a list retries
 * them later (shared/lists/settle.ts). Kept beside the results rather than in them: the result is the API's shape.
 */
const unanswered = new WeakSet<VerificationResult>();

/** Whether `result` is one whose address was never probed because its host did not answer in time. */
export const isUnanswered = (result: VerificationResult): boolean => unanswered.has(result);

/** The evidence of an item its host's drainer did not answer in time. */
const notAnswered = {
  outcome: { kind: 'timeout', reply: null, host: '', detail: 'no answer from the host job in time' },
  catchAll: null,
} as const satisfies { outcome: ProbeOutcome; catchAll: null };

/** The network's evidence about one address: the DNS answer, and what the probe found (no probe without a host). */
interface Evidence {
  outcome: ProbeOutcome | null;
  catchAll: boolean | null;
  dns: MailHostLookup;
  /** ASCII domain the typed one likely slipped from (only for a domain without mail or a known typo-squat). */
  suggestedDomain?: string | null;
  /** The typed domain is a known typo-squat (typo.ts): it receives mail, but not the person's. */
  typoSquat?: boolean;
}

function build(
  p: ParsedAddress,
  { dns, outcome, catchAll, suggestedDomain = null, typoSquat = false }: Evidence,
  started: number,
): VerificationResult {
  const flags = addressFlags(p.local, p.domain);
  const hasHosts = dns.kind === 'mx' || dns.kind === 'implicit';
  const provider = providerRuleFor(outcome?.host || (hasHosts ? dns.hosts[0]?.host : null));
  const verdict = decide({
    syntaxValid: true,
    dns,
    outcome,
    catchAll,
    flags,
    suggestedDomain,
    typoSquat,
    provider,
  });
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
    mx_records: mailHostNames(dns),
    did_you_mean: suggestedDomain
      ? `${p.local}@${domainToUnicode(suggestedDomain) || suggestedDomain}`
      : null,
    normalized_email: p.normalized,
    score: verdict.score,
    reason: verdict.reason,
    smtp_code: reply?.code ?? null,
    smtp_message: reply ? [reply.enhanced, reply.text].filter(Boolean).join(' ') : null,
    duration_ms: Math.round(performance.now() - started),
    verified_at: new Date().toISOString(),
    cached: false,
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
    mx_records: [],
    did_you_mean: null,
    normalized_email: null,
    score: 0,
    reason: 'bad_syntax',
    smtp_code: null,
    smtp_message: null,
    duration_ms: Math.round(performance.now() - started),
    verified_at: new Date().toISOString(),
    cached: false,
  };
}

/**
 * The work's answer, or `late()` at `answerBy` if it is not done by then. The work itself goes on (its own probe
 * timeout ends it); a failure after the deadline is nobody's to handle, so it is swallowed.
 */
async function withDeadline<T>(work: Promise<T>, answerBy: number, late: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), Math.max(0, answerBy - Date.now()));
  });
  work.catch(() => {});
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the random address's RCPT says about the domain: accepted means catch-all; a deferral says nothing. */
function catchAllVerdict(kind: ProbeOutcome['kind'] | undefined): boolean | null {
  if (kind === 'accepted') return true;
  if (kind === 'mailbox_not_found' || kind === 'mailbox_disabled') return false;
  return null;
}
