import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../shared/verification/verifier.js';
import type { VerifierOptions } from '../../shared/verification/types.js';
import { type DnsServer, mailDomain, mx, startDnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { testRedis, worldOptions } from './helpers.js';

// What the mailbox itself says: RCPT replies, catch-all, TLS, flags, IDN, syntax.

const MAIN = '127.0.0.2';
const CATCH_ALL = '127.0.0.3';
const TLS_ONLY = '127.0.0.4';
const RAW = '127.0.0.5';
const HELO_ONLY = '127.0.0.6';
const NO_UTF8 = '127.0.0.7';
const TLS_REFUSED = '127.0.0.8';

const GMAIL_NO_SUCH_USER = [
  '550-5.1.1 The email account that you tried to reach does not exist. Please try',
  "550-5.1.1 double-checking the recipient's email address for typos or",
  '550 5.1.1 unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser',
].join('\n');

let dns: DnsServer;
let world: MailWorld;
const store = testRedis('mailboxes');
let options: (extra?: Partial<VerifierOptions>) => VerifierOptions;

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: {
      kind: 'smtp',
      mailboxes: {
        alice: 'accept',
        info: 'accept',
        jörg: 'accept',
        bob: '550 5.1.1 <bob@example.test>: Recipient address rejected: User unknown in virtual mailbox table',
        full: '552 5.2.2 <full@example.test>: Recipient address rejected: Mailbox full',
        disabled: '550 5.2.1 The email account that you tried to reach is disabled.',
        policy: '554 5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org',
        grey: '450 4.7.1 <grey@example.test>: Recipient address rejected: Greylisted, please try again later',
      },
    },
    [CATCH_ALL]: { kind: 'smtp', others: 'accept' },
    [TLS_ONLY]: { kind: 'smtp', requireTls: true, mailboxes: { alice: 'accept' } },
    [RAW]: {
      kind: 'raw',
      rcpt: (a) =>
        a.startsWith('gone@')
          ? GMAIL_NO_SUCH_USER
          : /^(alice|"john doe")@/.test(a)
            ? undefined
            : '550 5.1.1 No such user',
    },
    [HELO_ONLY]: {
      kind: 'raw',
      ehlo: '502 5.5.2 Error: command not recognized',
      rcpt: (a) => (a.startsWith('alice@') ? undefined : '550 No such user here'),
    },
    [NO_UTF8]: { kind: 'smtp', hideSmtpUtf8: true, mailboxes: { jörg: 'accept', alice: 'accept' } },
    [TLS_REFUSED]: {
      kind: 'raw',
      ehlo: '250-raw.test\n250-ENHANCEDSTATUSCODES\n250 STARTTLS',
      starttls: '454 4.7.0 TLS not available due to local problem',
      rcpt: (a) => (a.startsWith('alice@') ? undefined : '550 5.1.1 No such user'),
    },
  });
  dns = await startDnsServer({
    ...mailDomain('example.test', MAIN),
    ...mailDomain('catchall.test', CATCH_ALL),
    ...mailDomain('tls.test', TLS_ONLY),
    ...mailDomain('raw.test', RAW),
    ...mailDomain('helo.test', HELO_ONLY),
    ...mailDomain('notls.test', TLS_REFUSED),
    'ascii.test': mx('mx.ascii.test'),
    'mx.ascii.test': { A: [NO_UTF8] },
    // Real provider names, so the flags come from the packages' lists; DNS still points home.
    'mailinator.com': mx('mx.example.test'),
    'gmail.com': mx('mx.example.test'),
    'xn--mnchen-3ya.test': mx('mx.example.test'),
  });
  options = (extra = {}) => worldOptions(store, dns.endpoint, world.port, extra);
});

afterAll(async () => {
  await world?.close();
  await dns?.close();
  await store.cleanup();
});

describe('mailbox verdicts', () => {
  it('reports an accepted mailbox on a non-catch-all domain as valid, with its evidence', async () => {
    const r = await createVerifier(options()).verify('alice@example.test');
    expect(r).toMatchObject({
      email: 'alice@example.test',
      status: 'valid',
      reason: 'accepted',
      syntax_valid: true,
      mx_found: true,
      smtp_valid: true,
      is_catch_all: false,
      is_disposable: false,
      is_role_based: false,
      is_free_provider: false,
      domain: 'example.test',
      mx_record: 'mx.example.test',
      smtp_code: 250,
    });
    expect(r.score).toBeGreaterThanOrEqual(80);
    expect(Number.isInteger(r.duration_ms)).toBe(true);
  });

  it.each([
    ['bob', 'invalid', 'mailbox_not_found', 550],
    ['disabled', 'invalid', 'mailbox_disabled', 550],
    ['full', 'risky', 'mailbox_full', 552],
    ['policy', 'unknown', 'blocked', 554],
    ['grey', 'unknown', 'greylisted', 450],
  ])('classifies %s@ as %s (%s)', async (local, status, reason, code) => {
    const r = await createVerifier(options()).verify(`${local}@example.test`);
    expect(r).toMatchObject({ status, reason, smtp_code: code, smtp_valid: false, mx_found: true });
    expect(r.smtp_message).toMatch(/^\d\.\d\.\d /);
  });

  it('marks every accepted address of a catch-all domain risky', async () => {
    const r = await createVerifier(options()).verify('anyone@catchall.test');
    expect(r).toMatchObject({ status: 'risky', reason: 'catch_all', is_catch_all: true, smtp_valid: true });
    expect(r.score).toBeGreaterThanOrEqual(40);
    expect(r.score).toBeLessThan(80);
  });

  it('upgrades to TLS when the server requires STARTTLS before MAIL FROM', async () => {
    const before = world.logs[TLS_ONLY]!.secureMailFroms;
    const r = await createVerifier(options()).verify('alice@tls.test');
    expect(r).toMatchObject({ status: 'valid', reason: 'accepted' });
    expect(world.logs[TLS_ONLY]!.secureMailFroms).toBeGreaterThan(before);
  });

  it('goes on without TLS when the server refuses STARTTLS (RFC 3207 §4)', async () => {
    expect(await createVerifier(options()).verify('alice@notls.test')).toMatchObject({
      status: 'valid',
      reason: 'accepted',
    });
    expect(await createVerifier(options()).verify('bob@notls.test')).toMatchObject({
      status: 'invalid',
      reason: 'mailbox_not_found',
    });
  });

  it('reads multi-line replies (Gmail style) as one reply', async () => {
    const r = await createVerifier(options()).verify('gone@raw.test');
    expect(r).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found', smtp_code: 550 });
    expect(r.smtp_message).toContain('unnecessary spaces');
  });

  it('falls back to HELO when EHLO is refused', async () => {
    const r = await createVerifier(options()).verify('alice@helo.test');
    expect(r).toMatchObject({ status: 'valid' });
    expect(world.logs[HELO_ONLY]!.heloNames).toContain('verifier.agora.test');
  });

  it('never sends DATA', () => {
    for (const log of Object.values(world.logs)) expect(log.dataCommands).toBe(0);
  });
});

describe('flags', () => {
  it('flags a disposable provider and rates an accepted address there risky', async () => {
    const r = await createVerifier(options()).verify('alice@mailinator.com');
    expect(r).toMatchObject({
      status: 'risky',
      reason: 'disposable',
      is_disposable: true,
      is_free_provider: false,
    });
  });

  it('flags a free provider without making it risky', async () => {
    const r = await createVerifier(options()).verify('alice@gmail.com');
    expect(r).toMatchObject({ status: 'valid', is_free_provider: true, is_disposable: false });
  });

  it('flags a role account and rates it risky', async () => {
    const r = await createVerifier(options()).verify('info@example.test');
    expect(r).toMatchObject({ status: 'risky', reason: 'role_based', is_role_based: true });
  });

  it('lets invalid beat risky: a rejected role account is invalid', async () => {
    const r = await createVerifier(options()).verify('bob@mailinator.com');
    expect(r).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found', is_disposable: true });
  });
});

describe('international and unusual addresses', () => {
  it('looks an IDN domain up in punycode and reports it in Unicode', async () => {
    const r = await createVerifier(options()).verify('alice@MÜNCHEN.test');
    expect(r).toMatchObject({ status: 'valid', domain: 'münchen.test' });
    expect(dns.queries).toContainEqual({ name: 'xn--mnchen-3ya.test', type: 'MX' });
  });

  it('probes a UTF-8 local part with SMTPUTF8 when offered, and gives up when not', async () => {
    const verifier = createVerifier(options());
    expect(await verifier.verify('jörg@example.test')).toMatchObject({ status: 'valid' });
    expect(await verifier.verify('jörg@ascii.test')).toMatchObject({
      status: 'unknown',
      reason: 'smtputf8_unsupported',
    });
  });

  it('probes a quoted local part as typed', async () => {
    const r = await createVerifier(options()).verify('"john doe"@raw.test');
    expect(r).toMatchObject({ status: 'valid' });
    expect(world.logs[RAW]!.rcpts).toContain('"john doe"@raw.test');
  });

  it('answers bad syntax without any DNS query or SMTP connection', async () => {
    const queries = dns.queries.length;
    const connections = Object.values(world.logs).reduce((n, l) => n + l.connections, 0);
    const results = await createVerifier(options()).verifyDomainGroup([
      'not-an-address',
      'a..b@example.test',
      'x@[127.0.0.2]',
      '',
    ]);
    for (const r of results)
      expect(r).toMatchObject({
        status: 'invalid',
        reason: 'bad_syntax',
        syntax_valid: false,
        score: 0,
        mx_record: '',
      });
    expect(dns.queries.length).toBe(queries);
    expect(Object.values(world.logs).reduce((n, l) => n + l.connections, 0)).toBe(connections);
  });

  it('answers in input order, duplicates included, probing each address once', async () => {
    const before = world.logs[MAIN]!.rcpts.length;
    const input = [
      'alice@example.test',
      'bob@example.test',
      'ALICE@Example.test',
      'alice@example.test',
      'nope',
    ];
    const results = await createVerifier(options()).verifyDomainGroup(input);
    expect(results.map((r) => r.email)).toEqual(input);
    // The test server, like most, ignores the case of local parts.
    expect(results.map((r) => r.status)).toEqual(['valid', 'invalid', 'valid', 'valid', 'invalid']);
    // alice, bob, ALICE (the case of a local part is the server's business) and one catch-all probe.
    expect(world.logs[MAIN]!.rcpts.length - before).toBe(4);
  });
});
