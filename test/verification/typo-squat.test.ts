import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../shared/verification/verifier.js';
import type { VerifierOptions } from '../../shared/verification/types.js';
import { type DnsServer, mailDomain, mx, startDnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { testRedis, worldOptions } from './helpers.js';

// Known typo-squats (typo.ts): near twins of popular mail domains that do receive mail, on a server that accepts
// every address, as a squatter's does. They still get did_you_mean and possible_typo, without being probed.

const MAIN = '127.0.0.2';
const SQUATTER = '127.0.0.3';

let dns: DnsServer;
let world: MailWorld;
const store = testRedis('typo-squat');
let options: (extra?: Partial<VerifierOptions>) => VerifierOptions;
const squatter = () => world.logs[SQUATTER]!;

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: { kind: 'smtp', mailboxes: { alice: 'accept' } },
    [SQUATTER]: { kind: 'smtp', others: 'accept' },
  });
  dns = await startDnsServer({
    ...mailDomain('gmail.com', MAIN),
    ...mailDomain('hotmail.com', MAIN),
    // Every twin below takes mail at the squatter's server. gmial.com and prontonmail.com are on typo.ts's list,
    // gmaill.com only when configured, hotmial.com on no list; protonmail.com does not exist in this world.
    'gmial.com': mx('mx.squatter.test'),
    'gmaill.com': mx('mx.squatter.test'),
    'hotmial.com': mx('mx.squatter.test'),
    'prontonmail.com': mx('mx.squatter.test'),
    'mx.squatter.test': { A: [SQUATTER] },
  });
  options = (extra = {}) => worldOptions(store, dns.endpoint, world.port, extra);
});

afterAll(async () => {
  await world?.close();
  await dns?.close();
  await store.cleanup();
});

describe('known typo-squats', () => {
  it('suggests the intended domain for a listed squat that accepts everything, without probing it', async () => {
    const verifier = createVerifier(options());
    try {
      const before = squatter().connections;
      const [first, second] = await verifier.verifyDomainGroup(['Alice@gmial.com', 'bob@GMIAL.com']);
      expect(first).toMatchObject({
        status: 'invalid',
        reason: 'possible_typo',
        score: 0,
        did_you_mean: 'Alice@gmail.com',
        mx_found: true,
        mx_record: 'mx.squatter.test',
        smtp_valid: false,
        smtp_code: null,
      });
      expect(second).toMatchObject({ reason: 'possible_typo', did_you_mean: 'bob@gmail.com' });
      expect(squatter().connections).toBe(before);
    } finally {
      await verifier.close();
    }
  });

  it('adds the squats of VERIFY_TYPO_SQUAT_DOMAINS to the list', async () => {
    const plain = createVerifier(options());
    const configured = createVerifier(options({ typoSquatDomains: ['GMAILL.com'] }));
    try {
      // Unlisted, it is probed like any domain that receives mail (risky: the squatter's server takes anything).
      expect(await plain.verify('alice@gmaill.com')).toMatchObject({
        status: 'risky',
        smtp_valid: true,
        did_you_mean: null,
      });
      expect(await configured.verify('alice@gmaill.com')).toMatchObject({
        status: 'invalid',
        reason: 'possible_typo',
        did_you_mean: 'alice@gmail.com',
      });
      // The built-in list stays.
      expect(await configured.verify('alice@gmial.com')).toMatchObject({ did_you_mean: 'alice@gmail.com' });
    } finally {
      await plain.close();
      await configured.close();
    }
  });

  it('leaves a near twin that receives mail and is no known squat alone, and probes it', async () => {
    const verifier = createVerifier(options());
    try {
      const before = squatter().connections;
      const result = await verifier.verify('alice@hotmial.com');
      expect(result).toMatchObject({ mx_found: true, smtp_valid: true, did_you_mean: null });
      expect(result.reason).not.toBe('possible_typo');
      expect(squatter().connections).toBeGreaterThan(before);
    } finally {
      await verifier.close();
    }
  });

  it('probes a listed squat as any domain when its twin receives no mail (nothing to suggest)', async () => {
    const verifier = createVerifier(options());
    try {
      const before = squatter().connections;
      const result = await verifier.verify('alice@prontonmail.com');
      expect(result).toMatchObject({ smtp_valid: true, did_you_mean: null });
      expect(result.reason).not.toBe('possible_typo');
      expect(squatter().connections).toBeGreaterThan(before);
    } finally {
      await verifier.close();
    }
  });
});
