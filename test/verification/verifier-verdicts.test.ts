import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_RULES, providerRuleFor } from '../../shared/verification/providers.js';
import { createVerifier } from '../../shared/verification/verifier.js';
import type { VerifierOptions } from '../../shared/verification/types.js';
import { type DnsServer, mailDomain, mx, startDnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { testRedis, worldOptions } from './helpers.js';

// The fields that tell a user what to do with a verdict: mx_records, normalized_email (issue 20).

const MAIN = '127.0.0.2';
const BARE = '127.0.0.3';
const ACCEPTS_ALL = '127.0.0.4';
const REFUSES_ALL = '127.0.0.5';

let dns: DnsServer;
let world: MailWorld;
const store = testRedis('verdicts');
let options: (extra?: Partial<VerifierOptions>) => VerifierOptions;

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: { kind: 'smtp', mailboxes: { alice: 'accept', bob: 'accept' } },
    // The provider table's two behaviours: a 250 to any RCPT (Yahoo), a 550 5.1.1 to any RCPT (Outlook.com).
    [ACCEPTS_ALL]: { kind: 'smtp', others: 'accept' },
    [REFUSES_ALL]: { kind: 'smtp' },
    // Bare 550s as QQ Mail sends them (https://smtp.codes/qq): one blocks the sender, one misses the mailbox.
    [BARE]: {
      kind: 'raw',
      rcpt: (a) =>
        a.startsWith('alice@')
          ? undefined
          : a.startsWith('gone@')
            ? '550 Mailbox not found. http://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000728'
            : '550 Sender frequency limited. http://service.exmail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000723',
    },
  });
  // Seven MX hosts, listed out of order; the prober tries five at most, the result names all seven.
  const hosts = ['mx7', 'mx1', 'mx3', 'mx2', 'mx6', 'mx4', 'mx5'];
  dns = await startDnsServer({
    ...mailDomain('example.test', MAIN),
    'many.test': {
      MX: hosts.map((h) => ({ preference: Number(h.slice(2)) * 10, exchange: `${h}.many.test` })),
    },
    ...Object.fromEntries(hosts.map((h) => [`${h}.many.test`, { A: [MAIN] }])),
    'implicit.test': { A: [MAIN] },
    ...mailDomain('bare.test', BARE),
    // Typos: gmail.com and company.com take mail; gmial.com does not exist, gmail.co refuses all mail (null MX),
    // hotmial.com takes mail itself (so it is not second-guessed); neither yahoo.con nor yahoo.com exists here.
    'gmail.com': mx('mx.example.test'),
    'company.com': mx('mx.example.test'),
    'gmail.co': { MX: [{ preference: 0, exchange: '.' }] },
    'hotmial.com': mx('mx.example.test'),
    // Domains whose MX names are the providers' (the table matches mail host names); DNS still points home.
    'yahoo-hosted.test': mx('mta5.am0.yahoodns.net'),
    'mta5.am0.yahoodns.net': { A: [ACCEPTS_ALL] },
    'hotmail-hosted.test': mx('hotmail-com.olc.protection.outlook.com'),
    'hotmail-com.olc.protection.outlook.com': { A: [REFUSES_ALL] },
    'plain-catchall.test': mx('mx.plain-catchall.test'),
    'mx.plain-catchall.test': { A: [ACCEPTS_ALL] },
    'plain-refusing.test': mx('mx.plain-refusing.test'),
    'mx.plain-refusing.test': { A: [REFUSES_ALL] },
    'xn--mnchen-3ya.test': mx('mx.example.test'),
  });
  options = (extra = {}) => worldOptions(store, dns.endpoint, world.port, extra);
});

afterAll(async () => {
  await world?.close();
  await dns?.close();
  await store.cleanup();
});

describe('mx_records', () => {
  it('lists every MX host by preference beside the one used', async () => {
    const verifier = createVerifier(options());
    try {
      const result = await verifier.verify('alice@many.test');
      expect(result.status).toBe('valid');
      expect(result.mx_record).toBe('mx1.many.test');
      expect(result.mx_records).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => `mx${n}.many.test`));
    } finally {
      await verifier.close();
    }
  });

  it('names the domain itself for an implicit MX, and nothing without a mail host or with bad syntax', async () => {
    const verifier = createVerifier(options());
    try {
      const [implicit, none, bad] = await verifier.verifyDomainGroup([
        'alice@implicit.test',
        'alice@nowhere.test',
        'not-an-address',
      ]);
      expect(implicit).toMatchObject({ mx_record: 'implicit.test', mx_records: ['implicit.test'] });
      expect(none).toMatchObject({ reason: 'nxdomain', mx_records: [] });
      expect(bad).toMatchObject({ reason: 'bad_syntax', mx_records: [] });
    } finally {
      await verifier.close();
    }
  });
});

describe('normalized_email', () => {
  it('keeps the local part as typed and gives the domain in lower-case Unicode', async () => {
    const verifier = createVerifier(options());
    try {
      const [idn, mixed, bad] = await verifier.verifyDomainGroup([
        'Alice@XN--MNCHEN-3YA.test',
        'Bob@Example.TEST',
        'a..b@example.test',
      ]);
      expect(idn).toMatchObject({ domain: 'münchen.test', normalized_email: 'Alice@münchen.test' });
      expect(mixed).toMatchObject({ status: 'valid', normalized_email: 'Bob@example.test' });
      expect(bad).toMatchObject({ reason: 'bad_syntax', normalized_email: null });
    } finally {
      await verifier.close();
    }
  });
});

describe('bare 550 replies', () => {
  it('reads a block of the prober as unknown/blocked and a missing mailbox as invalid', async () => {
    const verifier = createVerifier(options());
    try {
      const [blocked, gone] = await verifier.verifyDomainGroup(['someone@bare.test', 'gone@bare.test']);
      expect(blocked).toMatchObject({ status: 'unknown', reason: 'blocked', smtp_code: 550 });
      expect(gone).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found', smtp_code: 550 });
    } finally {
      await verifier.close();
    }
  });
});

describe('did_you_mean', () => {
  it('suggests the provider a domain without mail was mistyped from, with reason possible_typo', async () => {
    const verifier = createVerifier(options());
    try {
      const [transposed, nullMx, tld, nowhere, receives, fine] = await verifier.verifyDomainGroup([
        'Alice@gmial.com',
        'alice@gmail.co',
        'bob@company.con',
        'alice@yahoo.con',
        'alice@hotmial.com',
        'alice@gmail.com',
      ]);
      expect(transposed).toMatchObject({
        status: 'invalid',
        reason: 'possible_typo',
        score: 0,
        did_you_mean: 'Alice@gmail.com',
      });
      expect(nullMx).toMatchObject({
        status: 'invalid',
        reason: 'possible_typo',
        did_you_mean: 'alice@gmail.com',
      });
      expect(tld).toMatchObject({ reason: 'possible_typo', did_you_mean: 'bob@company.com' });
      // The suggestion must receive mail: yahoo.com does not exist in this world.
      expect(nowhere).toMatchObject({ status: 'invalid', reason: 'nxdomain', did_you_mean: null });
      // A domain that receives mail is not second-guessed.
      expect(receives).toMatchObject({ mx_found: true, smtp_valid: true, did_you_mean: null });
      expect(fine).toMatchObject({ status: 'valid', did_you_mean: null });
    } finally {
      await verifier.close();
    }
  });

  it('compares with the configured popular domains', async () => {
    const verifier = createVerifier(options({ typoDomains: ['company.com'] }));
    try {
      expect(await verifier.verify('carol@compnay.com')).toMatchObject({
        reason: 'possible_typo',
        did_you_mean: 'carol@company.com',
      });
    } finally {
      await verifier.close();
    }
  });
});

describe('provider table', () => {
  it('matches mail host names by suffix and cites every entry', () => {
    expect(providerRuleFor('mta7.am0.yahoodns.net.')?.rcpt).toBe('accepts_all');
    expect(providerRuleFor('outlook-com.olc.protection.outlook.com')?.rcpt).toBe('refusals_unreliable');
    // Microsoft 365 business tenants are not the consumer service: their refusals are trusted.
    expect(providerRuleFor('contoso-com.mail.protection.outlook.com')).toBeNull();
    expect(providerRuleFor('notyahoodns.net')).toBeNull();
    for (const rule of PROVIDER_RULES) {
      expect(rule.sources.length).toBeGreaterThan(0);
      for (const source of rule.sources) expect(source).toMatch(/^https:\/\//);
    }
  });

  it('reads an accepted RCPT at an accept-all provider as risky, a refusal at an unreliable one as unknown', async () => {
    const verifier = createVerifier(options());
    try {
      const [yahoo, hotmail, catchAll, refused] = await Promise.all([
        verifier.verify('anyone@yahoo-hosted.test'),
        verifier.verify('someone@hotmail-hosted.test'),
        verifier.verify('anyone@plain-catchall.test'),
        verifier.verify('someone@plain-refusing.test'),
      ]);
      expect(yahoo).toMatchObject({ status: 'risky', reason: 'accept_all_provider', smtp_valid: true });
      expect(hotmail).toMatchObject({ status: 'unknown', reason: 'unreliable_provider', smtp_code: 550 });
      // The same servers under other names: the general mechanisms decide.
      expect(catchAll).toMatchObject({ status: 'risky', reason: 'catch_all' });
      expect(refused).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found' });
    } finally {
      await verifier.close();
    }
  });
});
