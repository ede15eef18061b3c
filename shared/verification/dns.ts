import { promises as dnsPromises } from 'node:dns';
import net from 'node:net';
import type { RedisClient } from '../redis.js';
import pLimit from 'p-limit';
import { createFactCache } from './fact-cache.js';

/**
 * Mail host discovery (RFC 5321 §5.1, RFC 7505) with answers cached in Redis (and in the process). The outcomes are
 * kept apart because they mean different verdicts: NXDOMAIN and "no mail host" are facts about
 * the domain (invalid); SERVFAIL and timeouts are facts about the network (unknown, not cached).
 */

export interface MailHost {
  /** Exchange name, lower case, no trailing dot (the domain itself for an implicit MX). */
  host: string;
  priority: number;
  /** A and AAAA addresses, IPv4 first (more MX servers listen on IPv4). */
  addresses: string[];
}

export type DnsErrorKind = 'timeout' | 'servfail' | 'refused' | 'other';

export type MailHostLookup =
  | {
      kind: 'mx' | 'implicit';
      hosts: MailHost[];
      /** Every exchange name by preference, beyond the probed `hosts` too (absent in answers cached before it existed). */
      names?: string[];
    }
  | { kind: 'null_mx' | 'nxdomain' }
  /** Neither an MX host nor the domain itself has an address; `names` are the MX hosts named, if any. */
  | { kind: 'no_mail_host'; names?: string[] }
  | { kind: 'error'; error: DnsErrorKind; message: string };

export interface DnsOptions {
  dnsServers: string[];
  dnsTimeoutMs: number;
  dnsTries: number;
  redis: RedisClient;
  keyPrefix: string;
  /** Upper bound of a cached answer, seconds. */
  cacheMaxTtlSec: number;
}

// A domain may list dozens of MX hosts; probing more than a few only multiplies the traffic.
const MAX_MX_HOSTS = 5;
const MAX_ADDRESSES_PER_HOST = 4;
// Node's resolver does not expose the MX record's own TTL, nor the SOA minimum of a negative
// answer: negative facts get this fixed lifetime (RFC 2308 recommends 1–3 hours at most).
const NEGATIVE_TTL_SEC = 300;
// Queries in flight at once per process. c-ares reads every answer from one UDP socket with the system's default
// receive buffer (~208 KiB, roughly a hundred small answers): a bulk of cold domains asked all at once overflows it,
// and each answer the kernel drops costs a whole DNS timeout. Measured with bench/verify.ts: 11–122 dropped answers
// in one run of 200 cold domains, each adding a DNS timeout to its domain; none with this cap.
export const MAX_QUERIES_IN_FLIGHT = 64;

type Resolver = InstanceType<typeof dnsPromises.Resolver>;
type AddressAnswer = {
  addresses: string[];
  ttl: number;
  outcome: 'ok' | 'nodata' | 'nxdomain' | DnsErrorKind;
};

export function createMailHostResolver(opts: DnsOptions) {
  const resolver: Resolver = new dnsPromises.Resolver({ timeout: opts.dnsTimeoutMs, tries: opts.dnsTries });
  if (opts.dnsServers.length > 0) resolver.setServers(opts.dnsServers);
  const limit = pLimit(MAX_QUERIES_IN_FLIGHT);
  const cacheKey = (domain: string): string => `${opts.keyPrefix}dns:${domain}`;
  const facts = createFactCache<MailHostLookup>({ redis: opts.redis });

  // Lookups under way in this process: concurrent probes of a cold domain share one set of queries.
  const inflight = new Map<string, Promise<MailHostLookup>>();

  /** Mail hosts of an ASCII domain, by preference; from Redis when a fresh answer is there. */
  function lookup(domain: string): Promise<MailHostLookup> {
    const running = inflight.get(domain);
    if (running) return running;
    const started = lookupOnce(domain).finally(() => inflight.delete(domain));
    inflight.set(domain, started);
    return started;
  }

  async function lookupOnce(domain: string): Promise<MailHostLookup> {
    const cached = await facts.get(cacheKey(domain));
    if (cached) return cached;
    const { result, ttl } = await resolveUncached(domain);
    // Transient failures are never cached: the next request must ask again.
    if (result.kind !== 'error' && ttl > 0) {
      await facts.set(cacheKey(domain), result, Math.min(ttl, opts.cacheMaxTtlSec));
    }
    return result;
  }

  async function resolveUncached(domain: string): Promise<{ result: MailHostLookup; ttl: number }> {
    let records: Array<{ exchange: string; priority: number }>;
    try {
      records = await limit(() => resolver.resolveMx(domain));
    } catch (err) {
      const outcome = classifyDnsError(err);
      if (outcome === 'nxdomain') return { result: { kind: 'nxdomain' }, ttl: NEGATIVE_TTL_SEC };
      if (outcome !== 'nodata') return { result: dnsError(outcome, err), ttl: 0 };
      records = [];
    }

    // RFC 7505: a single MX of "." says the domain accepts no mail at all.
    const isRoot = (r: { exchange: string }): boolean => r.exchange === '' || r.exchange === '.';
    if (records.length === 1 && records[0] && isRoot(records[0]))
      return { result: { kind: 'null_mx' }, ttl: NEGATIVE_TTL_SEC };
    const sorted = records
      .filter((r) => !isRoot(r))
      .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
    const names = [...new Set(sorted.map((r) => normaliseName(r.exchange)))];
    const exchanges = sorted.slice(0, MAX_MX_HOSTS);

    if (exchanges.length === 0) {
      // RFC 5321 §5.1: no MX means the domain's own address is an implicit MX of preference 0.
      const own = await resolveAddresses(domain);
      if (own.outcome === 'nxdomain') return { result: { kind: 'nxdomain' }, ttl: NEGATIVE_TTL_SEC };
      if (own.addresses.length > 0) {
        return {
          result: {
            kind: 'implicit',
            hosts: [{ host: domain, priority: 0, addresses: own.addresses }],
            names: [domain],
          },
          ttl: own.ttl,
        };
      }
      if (own.outcome === 'nodata') return { result: { kind: 'no_mail_host' }, ttl: NEGATIVE_TTL_SEC };
      return { result: dnsError(own.outcome, new Error(`A/AAAA lookup of ${domain} failed`)), ttl: 0 };
    }

    const answers = await Promise.all(exchanges.map((r) => resolveAddresses(normaliseName(r.exchange))));
    if (answers.every((a) => a.addresses.length === 0)) {
      // No host to connect to. A lookup that failed says nothing about the domain (ask again later); hosts that
      // do not exist do (RFC 5321 §5.1: MX records none of which is usable are an error, not a fallback).
      const failed = answers.find((a) => a.outcome !== 'nodata' && a.outcome !== 'nxdomain');
      if (failed)
        return { result: dnsError(failed.outcome, new Error(`no MX host of ${domain} resolved`)), ttl: 0 };
      return { result: { kind: 'no_mail_host', names }, ttl: NEGATIVE_TTL_SEC };
    }
    const hosts = exchanges.map((r, i) => ({
      host: normaliseName(r.exchange),
      priority: r.priority,
      addresses: answers[i]!.addresses,
    }));
    // A host whose addresses could not be resolved right now makes the whole answer provisional.
    const transient = answers.some(
      (a) => a.outcome !== 'ok' && a.outcome !== 'nodata' && a.outcome !== 'nxdomain',
    );
    const ttls = answers.filter((a) => a.outcome === 'ok').map((a) => a.ttl);
    const ttl = transient ? 0 : ttls.length > 0 ? Math.min(...ttls) : NEGATIVE_TTL_SEC;
    return { result: { kind: 'mx', hosts, names }, ttl };
  }

  async function resolveAddresses(host: string): Promise<AddressAnswer> {
    // Some domains publish an IP address as exchange: wrong (RFC 7505 §3), but usable as is.
    if (net.isIP(host)) return { addresses: [host], ttl: NEGATIVE_TTL_SEC, outcome: 'ok' };
    const [v4, v6] = await Promise.all([
      limit(() => resolver.resolve4(host, { ttl: true })).then(ok, fail),
      limit(() => resolver.resolve6(host, { ttl: true })).then(ok, fail),
    ]);
    const addresses = [...v4.addresses, ...v6.addresses].slice(0, MAX_ADDRESSES_PER_HOST);
    if (addresses.length > 0) return { addresses, ttl: Math.min(v4.ttl, v6.ttl), outcome: 'ok' };
    // Prefer the most informative failure: a transient one means "ask again later".
    for (const outcome of ['timeout', 'servfail', 'refused', 'other', 'nxdomain'] as const) {
      if (v4.outcome === outcome || v6.outcome === outcome) return { addresses: [], ttl: 0, outcome };
    }
    return { addresses: [], ttl: 0, outcome: 'nodata' };
  }

  return { lookup };
}

export type MailHostResolver = ReturnType<typeof createMailHostResolver>;

/** Every mail host name of an answer by preference ([] without one): the result's `mx_records`. */
export function mailHostNames(lookup: MailHostLookup | null): string[] {
  if (lookup === null) return [];
  if (lookup.kind === 'no_mail_host') return lookup.names ?? [];
  if (lookup.kind !== 'mx' && lookup.kind !== 'implicit') return [];
  return lookup.names ?? lookup.hosts.map((h) => h.host);
}

function ok(records: Array<{ address: string; ttl: number }>): AddressAnswer {
  return {
    addresses: records.map((r) => r.address),
    ttl: Math.min(...records.map((r) => r.ttl)),
    outcome: records.length ? 'ok' : 'nodata',
  };
}

function fail(err: unknown): AddressAnswer {
  return { addresses: [], ttl: Number.POSITIVE_INFINITY, outcome: classifyDnsError(err) };
}

/** Maps node's c-ares error codes onto the distinctions the verdict needs. */
export function classifyDnsError(err: unknown): AddressAnswer['outcome'] {
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'ENOTFOUND':
      return 'nxdomain';
    case 'ENODATA':
      return 'nodata';
    case 'ETIMEOUT':
      return 'timeout';
    case 'ESERVFAIL':
      return 'servfail';
    case 'EREFUSED':
    case 'ECONNREFUSED':
      return 'refused';
    default:
      return 'other';
  }
}

function dnsError(error: AddressAnswer['outcome'], err: unknown): MailHostLookup {
  const kind: DnsErrorKind = error === 'nodata' || error === 'nxdomain' || error === 'ok' ? 'other' : error;
  return { kind: 'error', error: kind, message: err instanceof Error ? err.message : String(err) };
}

function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
