import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../shared/verification/verifier.js';
import type { VerifierOptions } from '../../shared/verification/types.js';
import { type DnsServer, mailDomain, startDnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { testRedis, worldOptions } from './helpers.js';

// Freshness (issue 20, item 3): verified_at, the Redis result cache, max_age, cached: true — proven by counting the
// SMTP connections and RCPTs the mail server sees. Each verifier below is a new process's worth of engine (its own
// session pool), sharing only Redis, so a probe that is not served from the cache must open a connection.

const MAIN = '127.0.0.2';

let dns: DnsServer;
let world: MailWorld;
const store = testRedis('result-cache');
let options: (extra?: Partial<VerifierOptions>) => VerifierOptions;

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: {
      kind: 'smtp',
      mailboxes: {
        alice: 'accept',
        bob: '550 5.1.1 <bob@example.test>: Recipient address rejected: User unknown in virtual mailbox table',
        grey: '450 4.7.1 <grey@example.test>: Recipient address rejected: Greylisted, please try again later',
      },
    },
  });
  dns = await startDnsServer({ ...mailDomain('example.test', MAIN) });
  options = (extra = {}) => worldOptions(store, dns.endpoint, world.port, extra);
});

afterAll(async () => {
  await world?.close();
  await dns?.close();
  await store.cleanup();
});

const log = () => world.logs[MAIN]!;
const rcptsOf = (address: string): number =>
  log().rcpts.filter((r) => r.toLowerCase().includes(address)).length;

/** Runs `work` with a verifier of its own, closed afterwards (its pooled sessions said goodbye). */
async function withVerifier<T>(
  opts: VerifierOptions,
  work: (v: ReturnType<typeof createVerifier>) => Promise<T>,
) {
  const verifier = createVerifier(opts);
  try {
    return await work(verifier);
  } finally {
    await verifier.close();
  }
}

describe('result cache', () => {
  it('reuses a verdict without any SMTP connection, says so, and keeps its verified_at', async () => {
    const opts = options();
    const first = await withVerifier(opts, (v) => v.verify('alice@example.test'));
    expect(first).toMatchObject({ status: 'valid', cached: false });
    expect(new Date(first.verified_at).toISOString()).toBe(first.verified_at);
    const connections = log().connections;
    const rcpts = rcptsOf('alice@example.test');

    const again = await withVerifier(opts, (v) => v.verify('alice@EXAMPLE.test'));
    expect(again).toMatchObject({
      email: 'alice@EXAMPLE.test',
      status: 'valid',
      reason: 'accepted',
      cached: true,
      verified_at: first.verified_at,
    });
    expect(log().connections).toBe(connections);
    expect(rcptsOf('alice@example.test')).toBe(rcpts);
  });

  it('probes afresh with max_age 0, and with a max_age the kept verdict is older than', async () => {
    const opts = options();
    await withVerifier(opts, (v) => v.verify('alice@example.test'));
    // Age the kept verdict by ten minutes (no waiting in tests): rewrite its verified_at.
    const key = `${opts.keyPrefix}result:alice@example.test`;
    const kept = JSON.parse((await store.redis.get(key))!) as { verified_at: string };
    const tenMinutesAgo = new Date(Date.now() - 600_000).toISOString();
    await store.redis.set(key, JSON.stringify({ ...kept, verified_at: tenMinutesAgo }), 'PX', 60_000);

    const young = await withVerifier(opts, (v) => v.verify('alice@example.test', { maxAgeSec: 3600 }));
    expect(young).toMatchObject({ cached: true, verified_at: tenMinutesAgo });

    const connections = log().connections;
    const tooOld = await withVerifier(opts, (v) => v.verify('alice@example.test', { maxAgeSec: 60 }));
    expect(tooOld.cached).toBe(false);
    expect(Date.parse(tooOld.verified_at)).toBeGreaterThan(Date.parse(tenMinutesAgo));
    expect(log().connections).toBe(connections + 1);

    const forced = await withVerifier(opts, (v) => v.verify('alice@example.test', { maxAgeSec: 0 }));
    expect(forced.cached).toBe(false);
    expect(log().connections).toBe(connections + 2);
  });

  it('keeps invalid verdicts but never unknown ones, and mixes kept and fresh results in one batch', async () => {
    const opts = options();
    await withVerifier(opts, (v) => v.verifyDomainGroup(['bob@example.test', 'grey@example.test']));
    const greyRcpts = rcptsOf('grey@example.test');
    const [bob, grey, alice] = await withVerifier(opts, (v) =>
      v.verifyDomainGroup(['bob@example.test', 'grey@example.test', 'alice@example.test']),
    );
    expect(bob).toMatchObject({ status: 'invalid', reason: 'mailbox_not_found', cached: true });
    expect(grey).toMatchObject({ status: 'unknown', reason: 'greylisted', cached: false });
    expect(alice).toMatchObject({ status: 'valid', cached: false });
    expect(rcptsOf('grey@example.test')).toBe(greyRcpts + 1);
  });

  it('is off with a TTL of 0', async () => {
    const opts = options({ resultTtlMs: 0 });
    await withVerifier(opts, (v) => v.verify('alice@example.test'));
    const connections = log().connections;
    const again = await withVerifier(opts, (v) => v.verify('alice@example.test'));
    expect(again.cached).toBe(false);
    expect(log().connections).toBe(connections + 1);
  });
});
