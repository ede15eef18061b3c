import { describe, expect, it } from 'vitest';
import { addressFlags } from '../../shared/verification/flags.js';
import type { MailHostLookup } from '../../shared/verification/dns.js';
import type { ProbeOutcome, ProbeOutcomeKind } from '../../shared/verification/smtp-probe.js';
import { decide, SCORE_BANDS, type Evidence } from '../../shared/verification/verdict.js';

const MX: MailHostLookup = {
  kind: 'mx',
  hosts: [{ host: 'mx.example.org', priority: 10, addresses: ['192.0.2.1'] }],
};
const NO_FLAGS = { is_disposable: false, is_role_based: false, is_free_provider: false };
const outcome = (kind: ProbeOutcomeKind): ProbeOutcome => ({
  kind,
  reply: null,
  host: 'mx.example.org',
  detail: null,
});
const evidence = (over: Partial<Evidence> = {}): Evidence => ({
  syntaxValid: true,
  dns: MX,
  outcome: outcome('accepted'),
  catchAll: false,
  flags: NO_FLAGS,
  ...over,
});

describe('decide: status and reason', () => {
  it.each<[string, Partial<Evidence>, string, string]>([
    ['bad syntax', { syntaxValid: false, dns: null, outcome: null }, 'invalid', 'bad_syntax'],
    ['NXDOMAIN', { dns: { kind: 'nxdomain' }, outcome: null }, 'invalid', 'nxdomain'],
    ['null MX', { dns: { kind: 'null_mx' }, outcome: null }, 'invalid', 'null_mx'],
    ['no MX, no A', { dns: { kind: 'no_mail_host' }, outcome: null }, 'invalid', 'no_mx'],
    [
      'DNS failure',
      { dns: { kind: 'error', error: 'servfail', message: 'x' }, outcome: null },
      'unknown',
      'dns_error',
    ],
    ['5.1.1', { outcome: outcome('mailbox_not_found') }, 'invalid', 'mailbox_not_found'],
    ['5.2.1', { outcome: outcome('mailbox_disabled') }, 'invalid', 'mailbox_disabled'],
    ['5.2.2', { outcome: outcome('mailbox_full') }, 'risky', 'mailbox_full'],
    ['accepted, catch-all', { catchAll: true }, 'risky', 'catch_all'],
    ['accepted, disposable', { flags: { ...NO_FLAGS, is_disposable: true } }, 'risky', 'disposable'],
    ['accepted, role', { flags: { ...NO_FLAGS, is_role_based: true } }, 'risky', 'role_based'],
    ['accepted, free provider', { flags: { ...NO_FLAGS, is_free_provider: true } }, 'valid', 'accepted'],
    [
      'rejected, disposable (invalid beats risky)',
      { outcome: outcome('mailbox_not_found'), flags: { ...NO_FLAGS, is_disposable: true } },
      'invalid',
      'mailbox_not_found',
    ],
    [
      'greylisted, disposable (risky needs an acceptance)',
      { outcome: outcome('greylisted'), flags: { ...NO_FLAGS, is_disposable: true } },
      'unknown',
      'greylisted',
    ],
    ['policy block', { outcome: outcome('blocked') }, 'unknown', 'blocked'],
    ['timeout', { outcome: outcome('timeout') }, 'unknown', 'timeout'],
    ['all MX refusing', { outcome: outcome('connection_failed') }, 'unknown', 'connection_failed'],
    ['private MX', { outcome: outcome('private_mx') }, 'unknown', 'private_mx'],
  ])('%s → %s (%s)', (_label, over, status, reason) => {
    expect(decide(evidence(over))).toMatchObject({ status, reason });
  });
});

describe('decide: score', () => {
  const kinds: ProbeOutcomeKind[] = [
    'accepted',
    'mailbox_not_found',
    'mailbox_disabled',
    'mailbox_full',
    'blocked',
    'greylisted',
    'temporary_failure',
    'rejected',
    'timeout',
    'connection_failed',
    'private_mx',
    'smtputf8_unsupported',
  ];
  const flagSets = [
    NO_FLAGS,
    { ...NO_FLAGS, is_disposable: true },
    { ...NO_FLAGS, is_role_based: true, is_free_provider: true },
    { is_disposable: true, is_role_based: true, is_free_provider: false },
  ];

  it('always lands inside the band of its status, bands never overlapping', () => {
    for (const kind of kinds)
      for (const flags of flagSets)
        for (const catchAll of [true, false, null]) {
          const v = decide(evidence({ outcome: outcome(kind), flags, catchAll }));
          const [min, max] = SCORE_BANDS[v.status];
          expect(Number.isInteger(v.score)).toBe(true);
          expect(v.score).toBeGreaterThanOrEqual(min);
          expect(v.score).toBeLessThanOrEqual(max);
        }
  });

  it('ranks evidence: clean > untold catch-all > role > catch-all > disposable', () => {
    const score = (over: Partial<Evidence>) => decide(evidence(over)).score;
    expect(score({})).toBe(100);
    expect(score({ catchAll: null })).toBe(90);
    expect(score({ flags: { ...NO_FLAGS, is_role_based: true } })).toBe(74);
    expect(score({ catchAll: true })).toBe(69);
    expect(score({ flags: { ...NO_FLAGS, is_disposable: true } })).toBe(59);
    expect(score({ outcome: outcome('greylisted') })).toBeGreaterThan(
      score({ outcome: outcome('connection_failed') }),
    );
  });
});

describe('addressFlags (data from the npm packages)', () => {
  it.each([
    ['bob', 'mailinator.com', { is_disposable: true, is_free_provider: false, is_role_based: false }],
    ['bob', 'inbox.mailinator.com', { is_disposable: true, is_free_provider: false, is_role_based: false }],
    ['bob', 'gmail.com', { is_disposable: false, is_free_provider: true, is_role_based: false }],
    ['bob', 'yahoo.co.uk', { is_disposable: false, is_free_provider: true, is_role_based: false }],
    ['info', 'example.com', { is_disposable: false, is_free_provider: false, is_role_based: true }],
    ['Postmaster', 'example.com', { is_disposable: false, is_free_provider: false, is_role_based: true }],
    ['sales+emea', 'example.com', { is_disposable: false, is_free_provider: false, is_role_based: true }],
    ['alice', 'example.com', { is_disposable: false, is_free_provider: false, is_role_based: false }],
  ])('%s@%s', (local, domain, expected) => {
    expect(addressFlags(local, domain)).toEqual(expected);
  });
});
