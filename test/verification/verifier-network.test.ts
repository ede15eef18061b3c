import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createVerifier } from '../../shared/verification/verifier.js';
import type { VerifierOptions } from '../../shared/verification/types.js';
import { type DnsServer, mx, startDnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { testRedis, worldOptions } from './helpers.js';

// What DNS and the network say: missing mail hosts, fallback, misbehaving servers, the
// private-address guard, session sharing and caching.

const MAIN = '127.0.0.2';
const TARPIT = '127.0.0.3';
const DROPPER = '127.0.0.4';
const GUARDED = '127.0.0.5';
const BATCH = '127.0.0.6';
const GREET_421 = '127.0.0.7';
const SENDER_BLOCK = '127.0.0.8';
const PARALLEL = '127.0.0.11';
const MAIL_999 = '127.0.0.12';
const NOBODY_1 = '127.0.0.9'; // nothing listens: connection refused
const NOBODY_2 = '127.0.0.10';

const host = (name: string, ip: string) => ({ [name]: { A: [ip] } });

let dns: DnsServer;
let world: MailWorld;
const store = testRedis('network');
let options: (extra?: Partial<VerifierOptions>) => VerifierOptions;

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: { kind: 'smtp', mailboxes: { alice: 'accept' } },
    [TARPIT]: { kind: 'raw', greeting: null },
    [DROPPER]: {
      kind: 'raw',
      rcpt: (a) =>
        a.startsWith('drop@') ? 'drop' : a.startsWith('alice@') ? undefined : '550 5.1.1 User unknown',
    },
    [GUARDED]: { kind: 'smtp', others: 'accept' },
    [BATCH]: {
      kind: 'smtp',
      mailboxes: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`user${i}`, 'accept' as const])),
    },
    [PARALLEL]: { kind: 'raw' },
    [GREET_421]: { kind: 'raw', greeting: '421 4.3.2 Service shutting down, closing transmission channel' },
    [SENDER_BLOCK]: { kind: 'raw', mailFrom: '550 5.7.1 Sender rejected by policy' },
    [MAIL_999]: { kind: 'raw', mailFrom: '999 5.7.1 Sender rejected' },
  });
  dns = await startDnsServer({
    ...host('mx.main.test', MAIN),
    'nullmx.test': { MX: [{ preference: 0, exchange: '.' }] },
    'implicit.test': { A: [MAIN] },
    'empty.test': {},
    'fallback.test': mx('mx1.fallback.test', 'mx.main.test'),
    ...host('mx1.fallback.test', NOBODY_1),
    'greet421.test': mx('mx.greet421.test', 'mx.main.test'),
    ...host('mx.greet421.test', GREET_421),
    'refused.test': mx('mx1.refused.test', 'mx2.refused.test'),
    ...host('mx1.refused.test', NOBODY_1),
    ...host('mx2.refused.test', NOBODY_2),
    'tarpit.test': mx('mx.tarpit.test'),
    ...host('mx.tarpit.test', TARPIT),
    'drop.test': mx('mx.drop.test'),
    ...host('mx.drop.test', DROPPER),
    'guarded.test': mx('mx.guarded.test'),
    'mx.guarded.test': { A: [GUARDED], AAAA: ['::ffff:127.0.0.5'] },
    'batch.test': mx('mx.batch.test'),
    ...host('mx.batch.test', BATCH),
    'senderblock.test': mx('mx.senderblock.test'),
    ...host('mx.senderblock.test', SENDER_BLOCK),
    'mail999.test': mx('mx.mail999.test'),
    ...host('mx.mail999.test', MAIL_999),
    'servfail.test': { rcode: 'SERVFAIL' },
    'slowdns.test': { silent: true },
    'main.test': mx('mx.main.test'),
    'parallel.test': mx('mx.parallel.test'),
    ...host('mx.parallel.test', PARALLEL),
  });
  options = (extra = {}) => worldOptions(store, dns.endpoint, world.port, extra);
});

afterAll(async () => {
  await world?.close();
  await dns?.close();
  await store.cleanup();
});

const mxQueries = (name: string): number =>
  dns.queries.filter((q) => q.name === name && q.type === 'MX').length;

describe('no mail host', () => {
  it.each([
    ['nowhere.test', 'nxdomain'],
    ['nullmx.test', 'null_mx'],
    ['empty.test', 'no_mx'],
  ])('rates an address at %s invalid (%s) without any SMTP connection', async (domain, reason) => {
    const r = await createVerifier(options()).verify(`alice@${domain}`);
    expect(r).toMatchObject({
      status: 'invalid',
      reason,
      mx_found: false,
      mx_record: '',
      smtp_valid: false,
      smtp_code: null,
    });
    expect(r.score).toBeLessThanOrEqual(10);
  });

  it('uses the domain itself as implicit MX when it has an A record but no MX', async () => {
    const r = await createVerifier(options()).verify('alice@implicit.test');
    expect(r).toMatchObject({ status: 'valid', mx_found: true, mx_record: 'implicit.test' });
  });

  it.each([
    ['servfail.test', 'SERVFAIL'],
    ['slowdns.test', 'a DNS timeout'],
  ])('rates %s unknown on %s, and does not cache it', async (domain) => {
    const verifier = createVerifier(options({ dnsTimeoutMs: 200 }));
    const before = mxQueries(domain);
    expect(await verifier.verify(`alice@${domain}`)).toMatchObject({
      status: 'unknown',
      reason: 'dns_error',
      mx_found: false,
    });
    await verifier.verify(`alice@${domain}`);
    expect(mxQueries(domain) - before).toBe(2);
  });

  it('caches a domain answer in Redis', async () => {
    const verifier = createVerifier(options());
    const before = mxQueries('main.test');
    await verifier.verify('alice@main.test');
    await verifier.verify('alice@main.test');
    expect(mxQueries('main.test') - before).toBe(1);
  });
});

describe('fallback and misbehaving servers', () => {
  it('moves to the next MX when the first refuses connections', async () => {
    const r = await createVerifier(options()).verify('alice@fallback.test');
    expect(r).toMatchObject({ status: 'valid', mx_record: 'mx.main.test' });
  });

  it('moves to the next MX when the first greets with 421', async () => {
    const r = await createVerifier(options()).verify('alice@greet421.test');
    expect(r).toMatchObject({ status: 'valid', mx_record: 'mx.main.test' });
    expect(world.logs[GREET_421]!.connections).toBeGreaterThan(0);
  });

  it('rates unknown when every MX refuses connections', async () => {
    const r = await createVerifier(options()).verify('alice@refused.test');
    expect(r).toMatchObject({
      status: 'unknown',
      reason: 'connection_failed',
      mx_found: true,
      smtp_valid: false,
    });
  });

  it('gives up on a tarpit that never greets', async () => {
    const r = await createVerifier(options({ smtpTimeoutMs: 300 })).verify('alice@tarpit.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout', mx_record: 'mx.tarpit.test' });
  });

  it('survives a connection dropped mid-session: other addresses keep their verdicts', async () => {
    const before = world.logs[DROPPER]!.connections;
    const [alice, drop] = await createVerifier(options()).verifyDomainGroup([
      'alice@drop.test',
      'drop@drop.test',
    ]);
    expect(alice).toMatchObject({ status: 'valid' });
    expect(drop).toMatchObject({ status: 'unknown', reason: 'connection_failed' });
    // The dropped address broke the session after alice's answer, which does not count against it (a server may
    // hang up after any reply); it broke the next two as their first RCPT, then it was given up.
    expect(world.logs[DROPPER]!.connections - before).toBe(3);
  });

  it('reads a refused MAIL FROM as a block of the prober, for every address', async () => {
    const results = await createVerifier(options()).verifyDomainGroup([
      'a@senderblock.test',
      'b@senderblock.test',
    ]);
    for (const r of results)
      expect(r).toMatchObject({ status: 'unknown', reason: 'blocked', smtp_code: 550 });
  });

  // A code outside 2xx-5xx is a broken server, not a 5xx refusing us: it must not pass for a block of the prober.
  it('reads a MAIL FROM answered with an invalid code as a broken session, not a block', async () => {
    const r = await createVerifier(options()).verify('a@mail999.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'connection_failed', smtp_valid: false });
  });
});

describe('private-address guard', () => {
  it('never connects to a loopback MX unless allowPrivateMx is set', async () => {
    const r = await createVerifier(options({ allowPrivateMx: false })).verify('alice@guarded.test');
    expect(r).toMatchObject({
      status: 'unknown',
      reason: 'private_mx',
      mx_found: true,
      mx_record: 'mx.guarded.test',
    });
    expect(world.logs[GUARDED]!.connections).toBe(0);
  });
});

describe('sessions and concurrency', () => {
  const batch = Array.from({ length: 100 }, (_, i) => `user${i}@batch.test`);

  it('verifies 100 addresses of one domain in ceil((100 + 1 catch-all probe) / 20) = 6 sessions', async () => {
    const before = world.logs[BATCH]!.connections;
    const verifier = createVerifier(options());
    const results = await verifier.verifyDomainGroup(batch);
    expect(results.every((r) => r.status === 'valid')).toBe(true);
    expect(world.logs[BATCH]!.connections - before).toBe(6);

    // The catch-all answer is cached now: the same batch, probed afresh (max_age 0: not from the result cache), needs
    // 100 RCPTs, 5 sessions.
    const again = world.logs[BATCH]!.connections;
    await verifier.verifyDomainGroup(batch, undefined, { maxAgeSec: 0 });
    expect(world.logs[BATCH]!.connections - again).toBe(5);
    await verifier.close();
  });

  it.each([1, 2])(
    'never holds more than mxConcurrency=%i sessions with one MX, across verifiers',
    async (limit) => {
      const log = world.logs[PARALLEL]!;
      log.maxOpen = log.open;
      const before = log.connections;
      const shared = options({ mxConcurrency: limit });
      // Two verifiers stand for two workers: they share only Redis.
      const workers = [createVerifier(shared), createVerifier(shared)];
      const addresses = Array.from({ length: 60 }, (_, i) => `p${i}@parallel.test`);
      await Promise.all(
        workers.flatMap((w) => [
          w.verifyDomainGroup(addresses.slice(0, 30)),
          w.verifyDomainGroup(addresses.slice(30)),
        ]),
      );
      expect(log.connections - before).toBeGreaterThan(limit);
      // Reaching the limit depends on scheduling; exceeding it must never happen.
      expect(log.maxOpen).toBeLessThanOrEqual(limit);
      expect(log.maxOpen).toBeGreaterThan(0);
      // Pooled sessions say goodbye, so the next case starts with no connection open.
      await Promise.all(workers.map((w) => w.close()));
      await vi.waitFor(() => expect(log.open).toBe(0), { timeout: 10_000 });
    },
  );
});
