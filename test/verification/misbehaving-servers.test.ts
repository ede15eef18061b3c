import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier, type Verifier } from '../../shared/verification/verifier.js';
import type { VerifierOptions } from '../../shared/verification/types.js';
import { type DnsServer, mailDomain, mx, startDnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld, type RawAction } from '../support/smtp-servers.js';
import { testRedis, worldOptions } from './helpers.js';

// Misbehaving DNS and mail servers, end to end through the verifier on real loopback servers: CNAMEs (MX targets,
// implicit MX through an alias, chains, a loop), tarpits (slow, trickling, endless replies), catch-all probes
// answered every way, and protocol oddities (421 or no greeting, broken TLS, bare LF, over-long lines, a server
// that closes after each RCPT, enhanced codes of policy blocks). Each result is the documented one and none is a
// wrong "valid".

const MAIN = '127.0.9.2';
const SLOW = '127.0.9.3';
const SLOWER = '127.0.9.4';
const RCPT_LATE = '127.0.9.5';
const TRICKLE_FAST = '127.0.9.6';
const TRICKLE_SLOW = '127.0.9.7';
const ENDLESS = '127.0.9.8';
const ENDLESS_GREETING = '127.0.9.9';
const ACCEPT_ALL = '127.0.9.10';
const PROBE_REJECTED = '127.0.9.11';
const PROBE_DEFERRED = '127.0.9.12';
const PROBE_DROPPED = '127.0.9.13';
const GREET_421 = '127.0.9.14';
const SILENT = '127.0.9.15';
const TLS_BREAKS = '127.0.9.16';
const EIGHT_BIT = '127.0.9.17';
const BARE_LF = '127.0.9.18';
const LONG_LINE = '127.0.9.19';
const CLOSES = '127.0.9.20';
const CODES = '127.0.9.21';
const PRIMARY_BUSY = '127.0.9.22';
const GREET_554 = '127.0.9.24';
const PROBE_421 = '127.0.9.25';
const BACKUP_ACCEPTS_ALL = '127.0.9.23';

/** A raw server's RCPT: `alice` exists, everything else gets `others`. */
const aliceOr =
  (others: RawAction) =>
  (address: string): RawAction =>
    address.startsWith('alice@') ? '250 2.1.5 Ok' : others;

const CODE_REPLIES: Record<string, string> = {
  unknown: '550 5.1.1 <unknown@codes.test>: Recipient address rejected: User unknown',
  policy: '550 5.7.1 <policy@codes.test>: Recipient address rejected: Access denied',
  relay: '553 5.7.1 <relay@codes.test>: Relaying denied',
  storage: '552 5.2.2 <storage@codes.test>: Mailbox full',
  blocked552: '552 5.7.1 Message rejected by policy',
  bounced: '553 5.1.3 Bad recipient address syntax',
  spf: '550 5.7.23 SPF validation failed',
  wordy: '550 5.7.1 User unknown in relay recipient table, but rejected as policy',
};

let dns: DnsServer;
let world: MailWorld;
const store = testRedis('misbehaving');
const verifiers: Verifier[] = [];
const verifier = (extra: Partial<VerifierOptions> = {}): Verifier => {
  const v = createVerifier(worldOptions(store, dns.endpoint, world.port, extra));
  verifiers.push(v);
  return v;
};

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: { kind: 'smtp', mailboxes: { alice: 'accept' } },
    [SLOW]: { kind: 'raw', delayMs: 1200, rcpt: aliceOr('550 5.1.1 User unknown') },
    [SLOWER]: { kind: 'raw', delayMs: 1000, rcpt: aliceOr('550 5.1.1 User unknown') },
    [RCPT_LATE]: { kind: 'raw', rcpt: () => ({ after: 1000, reply: '250 2.1.5 Ok' }) },
    [TRICKLE_FAST]: {
      kind: 'raw',
      rcpt: (a) => ({ trickle: aliceOr('550 5.1.1 User unknown')(a) as string, everyMs: 10 }),
    },
    [TRICKLE_SLOW]: { kind: 'raw', rcpt: () => ({ trickle: '250 2.1.5 Ok', everyMs: 100 }) },
    [ENDLESS]: { kind: 'raw', rcpt: () => 'endless' },
    [ENDLESS_GREETING]: { kind: 'raw', greeting: 'endless' },
    [ACCEPT_ALL]: { kind: 'smtp', others: 'accept' },
    [PROBE_REJECTED]: { kind: 'raw', rcpt: aliceOr('550 5.1.1 User unknown') },
    [PROBE_DEFERRED]: { kind: 'raw', rcpt: aliceOr('451 4.3.0 Temporary lookup failure') },
    [PROBE_DROPPED]: { kind: 'raw', rcpt: aliceOr('drop') },
    [GREET_421]: { kind: 'raw', greeting: '421 4.3.2 Service not available, closing transmission channel' },
    [SILENT]: { kind: 'raw', greeting: null },
    [TLS_BREAKS]: {
      kind: 'raw',
      ehlo: '250-raw.test\n250-STARTTLS\n250 ENHANCEDSTATUSCODES',
      starttls: '220 2.0.0 Ready to start TLS',
    },
    [EIGHT_BIT]: {
      kind: 'raw',
      ehlo: '250-raw.test\n250-8BITMIME\n250 ENHANCEDSTATUSCODES',
      rcpt: aliceOr('550 5.1.1 User unknown'),
    },
    [BARE_LF]: {
      kind: 'raw',
      bareLf: true,
      ehlo: '250-raw.test\n250-PIPELINING\n250 ENHANCEDSTATUSCODES',
      rcpt: aliceOr(
        '550-5.1.1 The email account that you tried to reach does not exist.\n550 5.1.1 See help',
      ),
    },
    [LONG_LINE]: {
      kind: 'raw',
      rcpt: (a) =>
        a.startsWith('alice@') ? `250 2.1.5 Ok ${'x'.repeat(3000)}` : `550 5.1.1 ${'y'.repeat(5000)}`,
    },
    [CLOSES]: {
      kind: 'raw',
      rcpt: (a) => ({ thenClose: a.startsWith('alice@') ? '250 2.1.5 Ok' : '550 5.1.1 User unknown' }),
    },
    // A primary MX that refuses the random probe, then is too busy for the real address (421); its backup accepts
    // every address, as backup MXs that queue for the primary do.
    [PRIMARY_BUSY]: {
      kind: 'raw',
      rcpt: (a) => (a.startsWith('alice@') ? '421 4.3.2 Too busy, try later' : '550 5.1.1 User unknown'),
    },
    [BACKUP_ACCEPTS_ALL]: { kind: 'smtp', others: 'accept' },
    [GREET_554]: { kind: 'raw', greeting: '554 5.7.1 Your IP is listed, go away' },
    [PROBE_421]: { kind: 'raw', rcpt: aliceOr('421 4.7.0 Too many errors, closing connection') },
    [CODES]: {
      kind: 'raw',
      rcpt: (a) => CODE_REPLIES[a.slice(0, a.indexOf('@'))] ?? '550 5.1.1 User unknown',
    },
  });
  dns = await startDnsServer({
    ...mailDomain('main.test', MAIN),
    // CNAMEs
    'cname-mx.test': mx('alias.cname-mx.test'),
    'alias.cname-mx.test': { CNAME: 'mx.main.test' },
    'implicit-alias.test': { CNAME: 'host.elsewhere.test' },
    'host.elsewhere.test': { A: [MAIN] },
    'domain-alias.test': { CNAME: 'main.test' },
    'chain.test': mx('a.chain.test'),
    'a.chain.test': { CNAME: 'b.chain.test' },
    'b.chain.test': { CNAME: 'c.chain.test' },
    'c.chain.test': { CNAME: 'mx.main.test' },
    'loop.test': mx('a.loop.test'),
    'a.loop.test': { CNAME: 'b.loop.test' },
    'b.loop.test': { CNAME: 'a.loop.test' },
    'implicit-loop.test': { CNAME: 'implicit-loop2.test' },
    'implicit-loop2.test': { CNAME: 'implicit-loop.test' },
    'dangling.test': mx('gone.dangling.test'),
    'gone.dangling.test': { CNAME: 'nothing.nowhere.test' },
    // tarpits
    ...mailDomain('slow.test', SLOW),
    ...mailDomain('slower.test', SLOWER),
    ...mailDomain('rcpt-late.test', RCPT_LATE),
    ...mailDomain('trickle-fast.test', TRICKLE_FAST),
    ...mailDomain('trickle-slow.test', TRICKLE_SLOW),
    ...mailDomain('endless.test', ENDLESS),
    ...mailDomain('endless-greeting.test', ENDLESS_GREETING),
    // catch-all
    ...mailDomain('accept-all.test', ACCEPT_ALL),
    ...mailDomain('probe-rejected.test', PROBE_REJECTED),
    ...mailDomain('probe-deferred.test', PROBE_DEFERRED),
    ...mailDomain('probe-dropped.test', PROBE_DROPPED),
    // others
    ...mailDomain('greet421.test', GREET_421),
    ...mailDomain('silent.test', SILENT),
    ...mailDomain('tls-breaks.test', TLS_BREAKS),
    ...mailDomain('eight-bit.test', EIGHT_BIT),
    ...mailDomain('bare-lf.test', BARE_LF),
    ...mailDomain('long-line.test', LONG_LINE),
    ...mailDomain('closes.test', CLOSES),
    ...mailDomain('codes.test', CODES),
    ...mailDomain('greet554.test', GREET_554),
    ...mailDomain('probe421.test', PROBE_421),
    'cname-servfail.test': mx('alias.cname-servfail.test'),
    'alias.cname-servfail.test': { CNAME: 'broken.cname-servfail.test' },
    'broken.cname-servfail.test': { rcode: 'SERVFAIL' },
    'cname-silent.test': { CNAME: 'silent.cname-silent.test' },
    'silent.cname-silent.test': { silent: true },
    'backup.test': mx('mx1.backup.test', 'mx2.backup.test'),
    'mx1.backup.test': { A: [PRIMARY_BUSY] },
    'mx2.backup.test': { A: [BACKUP_ACCEPTS_ALL] },
  });
});

afterAll(async () => {
  await Promise.all(verifiers.map((v) => v.close()));
  await world?.close();
  await dns?.close();
  await store.cleanup();
});

describe('CNAMEs', () => {
  it('follows an MX target that is a CNAME (RFC 5321 §5.1 tolerates it; RFC 2181 §10.3 forbids it)', async () => {
    const r = await verifier().verify('alice@cname-mx.test');
    expect(r).toMatchObject({ status: 'valid', mx_found: true, mx_record: 'alias.cname-mx.test' });
  });

  it('follows a chain of CNAMEs to the MX host', async () => {
    const r = await verifier().verify('alice@chain.test');
    expect(r).toMatchObject({ status: 'valid', mx_record: 'a.chain.test' });
  });

  it('takes the implicit MX through an alias: no MX, the name a CNAME to a host with A records', async () => {
    const r = await verifier().verify('alice@implicit-alias.test');
    expect(r).toMatchObject({ status: 'valid', mx_found: true, mx_record: 'implicit-alias.test' });
    expect(r.score).toBe(95);
  });

  it("takes the MX records of an aliased domain's target", async () => {
    const r = await verifier().verify('alice@domain-alias.test');
    expect(r).toMatchObject({ status: 'valid', mx_found: true, mx_record: 'mx.main.test' });
  });

  it.each(['cname-servfail.test', 'cname-silent.test'])(
    'rates %s (an alias whose target fails: SERVFAIL, no answer) unknown/dns_error',
    async (domain) => {
      const r = await verifier({ dnsTimeoutMs: 300 }).verify(`alice@${domain}`);
      expect(r).toMatchObject({ status: 'unknown', reason: 'dns_error', mx_found: false });
    },
  );

  it.each([
    ['loop.test', ['a.loop.test']],
    ['implicit-loop.test', []],
    ['dangling.test', ['gone.dangling.test']],
  ])('rates %s (a CNAME loop or dangling alias) without any address invalid/no_mx', async (domain, names) => {
    const before = Object.values(world.logs).reduce((n, l) => n + l.connections, 0);
    const r = await verifier().verify(`alice@${domain}`);
    expect(r).toMatchObject({ status: 'invalid', reason: 'no_mx', mx_found: false, mx_records: names });
    expect(Object.values(world.logs).reduce((n, l) => n + l.connections, 0)).toBe(before);
  });
});

describe('tarpits', () => {
  it('waits for a server answering every command just under smtpTimeoutMs', async () => {
    const [alice, bob] = await verifier({ smtpTimeoutMs: 3000, probeTimeoutMs: 30_000 }).verifyDomainGroup([
      'alice@slow.test',
      'bob@slow.test',
    ]);
    expect(alice).toMatchObject({ status: 'valid', reason: 'accepted', is_catch_all: false });
    expect(bob).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found' });
  });

  it('gives up on a server answering every command just over smtpTimeoutMs: unknown/timeout', async () => {
    const r = await verifier({ smtpTimeoutMs: 500 }).verify('alice@slower.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout', smtp_valid: false });
  });

  it('gives up on RCPT replies just over smtpTimeoutMs: unknown/timeout, never the late 250', async () => {
    const r = await verifier({ smtpTimeoutMs: 500 }).verify('alice@rcpt-late.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout', smtp_valid: false });
  });

  it('reads a reply trickled byte by byte within the deadline', async () => {
    const [alice, bob] = await verifier({ smtpTimeoutMs: 3000 }).verifyDomainGroup([
      'alice@trickle-fast.test',
      'bob@trickle-fast.test',
    ]);
    expect(alice).toMatchObject({ status: 'valid', smtp_code: 250 });
    expect(bob).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found' });
  });

  it('times out a reply trickled slower than the deadline: the bytes arriving do not extend it', async () => {
    const r = await verifier({ smtpTimeoutMs: 500 }).verify('alice@trickle-slow.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout', smtp_valid: false });
  });

  it.each(['endless.test', 'endless-greeting.test'])(
    'cuts an endless multi-line reply (250-… forever) at %s: unknown, never valid',
    async (domain) => {
      const r = await verifier().verify(`alice@${domain}`);
      expect(r).toMatchObject({ status: 'unknown', smtp_valid: false });
      expect(['connection_failed', 'timeout']).toContain(r.reason);
    },
  );
});

describe('catch-all detection', () => {
  it('flags a server accepting everything as catch-all: risky, never valid', async () => {
    const r = await verifier().verify('alice@accept-all.test');
    expect(r).toMatchObject({ status: 'risky', reason: 'catch_all', is_catch_all: true, smtp_valid: true });
  });

  it('rates the real address valid when the random probe is refused as unknown', async () => {
    const v = verifier();
    const [alice, bob] = await v.verifyDomainGroup(['alice@probe-rejected.test', 'bob@probe-rejected.test']);
    expect(alice).toMatchObject({ status: 'valid', is_catch_all: false, score: 100 });
    expect(bob).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found' });
  });

  it('probes the catch-all of a fallback MX too: an accept-all backup never makes the address valid', async () => {
    const v = verifier();
    const r = await v.verify('alice@backup.test');
    expect(r).toMatchObject({ mx_record: 'mx2.backup.test', smtp_valid: true, is_catch_all: true });
    expect(r).toMatchObject({ status: 'risky', reason: 'catch_all' });
    // Also with the domain's catch-all verdict (the primary's: no) cached.
    expect(await v.verify('alice@backup.test', { maxAgeSec: 0 })).toMatchObject({ status: 'risky' });
  });

  it('answers a 421 to the random probe as the host going away: unknown, never valid or catch-all', async () => {
    const r = await verifier().verify('alice@probe421.test');
    expect(r).toMatchObject({ status: 'unknown', smtp_valid: false, is_catch_all: false });
  });

  it('counts a deferred probe (4xx) as untold: valid at 90, not catch-all, not cached', async () => {
    const v = verifier();
    const rcpts = (): number => world.logs[PROBE_DEFERRED]!.rcpts.length;
    const before = rcpts();
    expect(await v.verify('alice@probe-deferred.test')).toMatchObject({
      status: 'valid',
      is_catch_all: false,
      score: 90,
    });
    // The next request asks the random address again (probe + alice, twice).
    await v.verify('alice@probe-deferred.test', { maxAgeSec: 0 });
    expect(rcpts() - before).toBe(4);
  });

  it('counts a probe that drops the connection as untold: the real address valid at 90, not catch-all', async () => {
    const r = await verifier().verify('alice@probe-dropped.test');
    expect(r).toMatchObject({ status: 'valid', is_catch_all: false, score: 90 });
  });
});

describe('greeting, TLS, wire format', () => {
  it('rates a server greeting with 421 unknown', async () => {
    const r = await verifier().verify('alice@greet421.test');
    expect(r).toMatchObject({ status: 'unknown', smtp_valid: false, mx_record: 'mx.greet421.test' });
  });

  it('rates a server greeting with a 5xx unknown/blocked, never invalid', async () => {
    const r = await verifier().verify('alice@greet554.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'blocked', smtp_valid: false });
  });

  it('rates a server that never greets unknown/timeout', async () => {
    const r = await verifier({ smtpTimeoutMs: 300 }).verify('alice@silent.test');
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout' });
  });

  it('rates a server whose TLS breaks after STARTTLS unknown, never valid', async () => {
    const r = await verifier({ smtpTimeoutMs: 500 }).verify('alice@tls-breaks.test');
    expect(r).toMatchObject({ status: 'unknown', smtp_valid: false });
    expect(world.logs[TLS_BREAKS]!.rcpts).toEqual([]);
  });

  it('gives a non-ASCII local part to a server with 8BITMIME but no SMTPUTF8 as smtputf8_unsupported', async () => {
    const [utf8, alice] = await verifier().verifyDomainGroup(['jösé@eight-bit.test', 'alice@eight-bit.test']);
    expect(utf8).toMatchObject({ status: 'unknown', reason: 'smtputf8_unsupported' });
    expect(alice).toMatchObject({ status: 'valid' });
    // No RCPT with a non-ASCII byte (the catch-all probe's random local part may itself start with a "j").
    expect(world.logs[EIGHT_BIT]!.rcpts.some((a) => [...a].some((c) => c.charCodeAt(0) > 0x7f))).toBe(false);
  });

  it('reads replies whose lines end with a bare LF', async () => {
    const [alice, bob] = await verifier().verifyDomainGroup(['alice@bare-lf.test', 'bob@bare-lf.test']);
    expect(alice).toMatchObject({ status: 'valid' });
    expect(bob).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found' });
  });

  it('reads a long reply line under the cap, and fails a line over it without a verdict from it', async () => {
    const [alice, bob] = await verifier().verifyDomainGroup(['alice@long-line.test', 'bob@long-line.test']);
    expect(alice).toMatchObject({ status: 'valid' });
    expect(bob).toMatchObject({ status: 'unknown', reason: 'connection_failed' });
  });

  it('keeps every verdict of a server that closes the connection after each RCPT', async () => {
    const results = await verifier().verifyDomainGroup([
      'alice@closes.test',
      'bob@closes.test',
      'carol@closes.test',
    ]);
    expect(results.map((r) => [r.status, r.reason])).toEqual([
      ['valid', 'accepted'],
      ['invalid', 'mailbox_not_found'],
      ['invalid', 'mailbox_not_found'],
    ]);
  });

  it.each([
    ['unknown', 'invalid', 'mailbox_not_found', 550],
    ['policy', 'unknown', 'blocked', 550],
    ['relay', 'unknown', 'blocked', 553],
    ['storage', 'risky', 'mailbox_full', 552],
    ['blocked552', 'unknown', 'blocked', 552],
    ['bounced', 'invalid', 'mailbox_not_found', 553],
    ['spf', 'unknown', 'blocked', 550],
    ['wordy', 'unknown', 'blocked', 550],
  ])(
    'classifies %s@codes.test as %s/%s: policy blocks (x.7.x) never invalid',
    async (local, status, reason, code) => {
      const r = await verifier().verify(`${local}@codes.test`);
      expect(r).toMatchObject({ status, reason, smtp_code: code });
    },
  );
});
