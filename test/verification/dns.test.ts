import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailHostResolver, MAX_QUERIES_IN_FLIGHT } from '../../shared/verification/dns.js';
import { mailDomain, startDnsServer, type DnsServer, type Zone } from '../support/dns-server.js';
import { freshPrefix, testRedis } from './helpers.js';

let dns: DnsServer;
const store = testRedis('dns');

beforeAll(async () => {
  dns = await startDnsServer({
    'multi.test': {
      MX: [
        { preference: 20, exchange: 'backup.multi.test' },
        { preference: 5, exchange: 'Primary.Multi.Test.' },
        { preference: 10, exchange: 'v6only.multi.test' },
        { preference: 30, exchange: 'ghost.multi.test' },
      ],
    },
    'primary.multi.test': { A: ['192.0.2.1', '192.0.2.2'], ttl: 120 },
    'backup.multi.test': { A: ['192.0.2.3'], ttl: 60 },
    'v6only.multi.test': { AAAA: ['2001:db8::25'], ttl: 600 },
    'long.test': { MX: [{ preference: 1, exchange: 'mx.long.test' }] },
    'mx.long.test': { A: ['192.0.2.9'], ttl: 86_400 },
    'flaky.test': { MX: [{ preference: 1, exchange: 'mx.flaky.test' }] },
    'mx.flaky.test': { rcode: 'SERVFAIL' },
    'refused.test': { rcode: 'REFUSED' },
    // MX records naming hosts that do not exist (NXDOMAIN) or have no address (NODATA).
    'ghosted.test': {
      MX: [
        { preference: 1, exchange: 'gone.ghosted.test' },
        { preference: 2, exchange: 'empty.ghosted.test' },
      ],
    },
    'empty.ghosted.test': {},
  });
});

afterAll(async () => {
  await dns?.close();
  await store.cleanup();
});

const resolverFor = (prefix: string, cacheMaxTtlSec = 3600) =>
  createMailHostResolver({
    dnsServers: [dns.endpoint],
    dnsTimeoutMs: 300,
    dnsTries: 1,
    redis: store.redis,
    keyPrefix: prefix,
    cacheMaxTtlSec,
  });

describe('mail host lookup', () => {
  it('orders MX hosts by preference, normalises names and resolves A and AAAA', async () => {
    const result = await resolverFor(freshPrefix(store.prefix)).lookup('multi.test');
    expect(result).toEqual({
      kind: 'mx',
      hosts: [
        { host: 'primary.multi.test', priority: 5, addresses: ['192.0.2.1', '192.0.2.2'] },
        { host: 'v6only.multi.test', priority: 10, addresses: ['2001:db8::25'] },
        { host: 'backup.multi.test', priority: 20, addresses: ['192.0.2.3'] },
        // An MX without addresses stays in the list: the probe reports it as unreachable.
        { host: 'ghost.multi.test', priority: 30, addresses: [] },
      ],
      names: ['primary.multi.test', 'v6only.multi.test', 'backup.multi.test', 'ghost.multi.test'],
    });
  });

  it('caches for the shortest address TTL, bounded by cacheMaxTtlSec', async () => {
    const prefix = freshPrefix(store.prefix);
    await resolverFor(prefix).lookup('multi.test');
    expect(await store.redis.ttl(`${prefix}dns:multi.test`)).toBeLessThanOrEqual(60);
    await resolverFor(prefix, 900).lookup('long.test');
    const ttl = await store.redis.ttl(`${prefix}dns:long.test`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(900);
  });

  it('serves the second lookup from Redis, across resolver instances', async () => {
    const prefix = freshPrefix(store.prefix);
    const before = dns.queries.length;
    await resolverFor(prefix).lookup('long.test');
    const afterFirst = dns.queries.length;
    expect(await resolverFor(prefix).lookup('long.test')).toMatchObject({ kind: 'mx' });
    expect(afterFirst).toBeGreaterThan(before);
    expect(dns.queries.length).toBe(afterFirst);
  });

  it('answers a DNS error, not cached, when no MX host resolved because the lookups failed', async () => {
    const prefix = freshPrefix(store.prefix);
    expect(await resolverFor(prefix).lookup('flaky.test')).toMatchObject({
      kind: 'error',
      error: 'servfail',
    });
    expect(await store.redis.exists(`${prefix}dns:flaky.test`)).toBe(0);
  });

  it('answers no mail host, cached, when every MX host named does not exist or has no address', async () => {
    const prefix = freshPrefix(store.prefix);
    expect(await resolverFor(prefix).lookup('ghosted.test')).toEqual({
      kind: 'no_mail_host',
      names: ['gone.ghosted.test', 'empty.ghosted.test'],
    });
    expect(await store.redis.exists(`${prefix}dns:ghosted.test`)).toBe(1);
  });

  it('keeps REFUSED apart from NXDOMAIN', async () => {
    const resolver = resolverFor(freshPrefix(store.prefix));
    expect(await resolver.lookup('refused.test')).toMatchObject({ kind: 'error', error: 'refused' });
    expect(await resolver.lookup('absent.test')).toEqual({ kind: 'nxdomain' });
  });

  it('keeps a bulk of cold domains to a bounded number of queries in flight, and answers them all', async () => {
    // c-ares reads every answer from one socket with the OS's default receive buffer: a burst of hundreds of
    // answers overflows it. 150 domains are 450 queries (MX, then A and AAAA of the MX host).
    const zone: Zone = {};
    for (let i = 0; i < 150; i++)
      Object.assign(zone, mailDomain(`bulk${i}.test`, `192.0.2.${(i % 250) + 1}`));
    const slow = await startDnsServer(zone, '127.0.0.1', { answerDelayMs: 20 });
    try {
      const resolver = createMailHostResolver({
        dnsServers: [slow.endpoint],
        dnsTimeoutMs: 2000,
        dnsTries: 1,
        redis: store.redis,
        keyPrefix: freshPrefix(store.prefix),
        cacheMaxTtlSec: 3600,
      });
      const results = await Promise.all(
        Object.keys(zone)
          .filter((n) => n.startsWith('bulk'))
          .map((d) => resolver.lookup(d)),
      );
      expect(results.map((r) => r.kind)).toEqual(Array(150).fill('mx'));
      expect(slow.queries).toHaveLength(450);
      expect(slow.maxUnanswered()).toBeLessThanOrEqual(MAX_QUERIES_IN_FLIGHT);
      expect(slow.maxUnanswered()).toBeGreaterThan(MAX_QUERIES_IN_FLIGHT / 2); // still in parallel
    } finally {
      await slow.close();
    }
  });
});
