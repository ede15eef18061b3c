import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHostQueue, type HostWorkItem } from '../../shared/verification/host-queue.js';
import type { VerificationResult, VerifierOptions } from '../../shared/verification/types.js';
import { createVerifier, type Verifier } from '../../shared/verification/verifier.js';
import { mailDomain, startDnsServer, type DnsServer, type Zone } from '../support/dns-server.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { startSlowSmtp, type SlowSmtpWorld } from '../verify-service/slow-smtp.js';
import { testRedis, worldOptions } from './helpers.js';

// The dispatch of a host's work to the one process draining it (host jobs of verify-hosts, BullMQ deduplication
// keepLastIfActive): the pending work per host in Redis, the per-MX cap across real drainer processes, shared
// connections and one catch-all probe per domain across concurrent requests, synchronous work first, and a
// SIGKILLed drainer's in-flight items taken over by stalled-job recovery.

const store = testRedis('host-dispatch');
const CATCH_ALL_PROBE = /^[a-z0-9]{18}@/;
// Six MX hosts for the cap test, one shared MX for the sharing tests, one that freezes for the kill test.
const CAP_HOSTS = Array.from({ length: 6 }, (_, h) => `127.0.7.${h + 1}`);
const SHARED = '127.0.7.20';
const ORDER = '127.0.7.21';
const FREEZE = '127.0.7.22';

let dns: DnsServer;
let smtp: SlowSmtpWorld;
// Its own world: every host's first connection there goes silent after its first RCPT.
let frozen: SlowSmtpWorld;
const rcpts: { host: string; address: string }[] = [];
let firstFrozenRcpt: () => void;
const frozenRcptSeen = new Promise<void>((resolve) => (firstFrozenRcpt = resolve));
const processes: RunningProcess[] = [];
const options = (extra: Partial<VerifierOptions> = {}): VerifierOptions =>
  worldOptions(store, dns.endpoint, smtp.port, { probeTimeoutMs: 30_000, smtpTimeoutMs: 30_000, ...extra });

beforeAll(async () => {
  const accepts = (a: string) => !/^(nobody|[a-z0-9]{18})@/.test(a);
  smtp = await startSlowSmtp([...CAP_HOSTS, SHARED, ORDER], {
    delayMs: 50,
    accepts,
    onRcpt: (address, host) => rcpts.push({ host, address }),
  });
  frozen = await startSlowSmtp([FREEZE], {
    delayMs: 50,
    accepts,
    onRcpt: () => firstFrozenRcpt(),
    freezeAfterFirstRcpt: (connection) => connection === 1,
  });
  const zone: Zone = {};
  CAP_HOSTS.forEach((ip, h) => Object.assign(zone, mailDomain(`cap${h}.test`, ip)));
  Object.assign(zone, mailDomain('one.shared.test', SHARED), mailDomain('order.test', ORDER));
  Object.assign(zone, mailDomain('freeze.test', FREEZE));
  // A second domain on the shared MX host.
  zone['two.shared.test'] = zone['one.shared.test']!;
  dns = await startDnsServer(zone);
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await smtp?.close();
  await frozen?.close();
  await dns?.close();
  await store.cleanup();
});

/** A real drainer process serving the host jobs of `opts`' queue. */
async function startDrainer(opts: VerifierOptions): Promise<RunningProcess> {
  const { redis: _redis, logger: _logger, ...rest } = opts;
  const child = startProcess('test/verification/fixtures/drainer.ts', [JSON.stringify(rest)], {});
  processes.push(child);
  await child.waitFor(/drainer ready/, 60_000);
  return child;
}

const addresses = (domain: string, n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `user${from + i}@${domain}`);

describe('pending work per host (host-queue.ts)', () => {
  const item = (address: string): HostWorkItem => ({
    ticket: address,
    replyTo: 'nobody',
    domain: 'example.test',
    address,
    smtputf8: false,
    answerBy: Date.now() + 60_000,
  });

  it('hands out synchronous work before list work, in shares, and takes a dead attempt’s items back', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}q:`,
      keyTtlMs: 60_000,
      claimTtlMs: 60_000,
    });
    await queue.push('mx.test', 'list', ['l1', 'l2', 'l3'].map(item));
    await queue.push('mx.test', 'sync', ['s1', 's2'].map(item));
    expect(await queue.waiting('mx.test')).toBe(5);

    // Five waiting, two lanes: a share of three (at least minBatch 1, at most maxBatch 3).
    const first = await queue.take('mx.test', 'job-1', { maxBatch: 3, minBatch: 1, lanes: 2 });
    expect(first.map((t) => t.item.address)).toEqual(['s1', 's2', 'l1']);
    const second = await queue.take('mx.test', 'job-1', { maxBatch: 3, minBatch: 1, lanes: 2 });
    expect(second.map((t) => t.item.address)).toEqual(['l2']);
    await queue.done('mx.test', second);

    // The attempt dies with s1, s2, l1 in flight: the job's next attempt starts with them, in order, before l3.
    expect(await queue.restore('mx.test', 'job-1')).toBe(3);
    const next = await queue.take('mx.test', 'job-1', { maxBatch: 10, minBatch: 1, lanes: 1 });
    expect(next.map((t) => t.item.address)).toEqual(['s1', 's2', 'l1', 'l3']);
    await queue.done('mx.test', next);
    expect(await queue.restore('mx.test', 'job-1')).toBe(0);
    expect(await queue.waiting('mx.test')).toBe(0);
  });

  it('spreads waiting synchronous work over every lane, and list work only in shares worth a session', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}m:`,
      keyTtlMs: 60_000,
      claimTtlMs: 60_000,
    });
    const limits = { maxBatch: 19, minBatch: 4, lanes: 2 };
    // Three addresses a caller waits for: two lanes, so a share of two, then one (below minBatch: a caller's
    // latency is its slowest address, so the other lane takes the rest at once).
    await queue.push('mx.test', 'sync', ['s1', 's2', 's3'].map(item));
    const first = await queue.take('mx.test', 'job-1', limits);
    expect(first.map((t) => t.item.address)).toEqual(['s1', 's2']);
    const second = await queue.take('mx.test', 'job-1', limits);
    expect(second.map((t) => t.item.address)).toEqual(['s3']);
    await queue.done('mx.test', [...first, ...second]);

    // Five list addresses: half of them (three) is below minBatch, so a share of four, then the last one.
    await queue.push('mx.test', 'list', ['l1', 'l2', 'l3', 'l4', 'l5'].map(item));
    const third = await queue.take('mx.test', 'job-1', limits);
    expect(third.map((t) => t.item.address)).toEqual(['l1', 'l2', 'l3', 'l4']);
    const fourth = await queue.take('mx.test', 'job-1', limits);
    expect(fourth.map((t) => t.item.address)).toEqual(['l5']);
    await queue.done('mx.test', [...third, ...fourth]);
  });

  it('takes a lane’s answered items off in-flight with its next take, and says what still waits', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}n:`,
      keyTtlMs: 60_000,
      claimTtlMs: 60_000,
    });
    await queue.push('mx.test', 'sync', ['a', 'b', 'c', 'd', 'e'].map(item));
    expect(await queue.restore('mx.test', 'job-1')).toBe(0);
    const limits = { maxBatch: 2, minBatch: 1, lanes: 1 };

    const first = await queue.next('mx.test', 'job-1', limits, []);
    expect(first.taken.map((t) => t.item.address)).toEqual(['a', 'b']);
    expect(first.waiting).toBe(3);
    // a and b answered: they leave in-flight in the script that takes c and d.
    const second = await queue.next('mx.test', 'job-1', limits, first.taken);
    expect(second.taken.map((t) => t.item.address)).toEqual(['c', 'd']);
    expect(second.waiting).toBe(1);
    // The attempt dies now: only c and d (in flight) come back, in front of e.
    expect(await queue.restore('mx.test', 'job-2')).toBeNull(); // job-1 still owns the host
    expect(await queue.restore('mx.test', 'job-1')).toBe(2);
    const last = await queue.next('mx.test', 'job-1', { ...limits, maxBatch: 10 }, []);
    expect(last.taken.map((t) => t.item.address)).toEqual(['c', 'd', 'e']);
    expect(last.waiting).toBe(0);
    // A job that does not own the host takes nothing, but its answered items still leave in-flight.
    expect(await queue.next('mx.test', 'job-2', limits, last.taken)).toEqual({ taken: [], waiting: 0 });
    expect(await queue.restore('mx.test', 'job-1')).toBe(0);
  });

  it('asks for a host job only when no job has claimed the host, and a job gives its claim up only when idle', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}claim:`,
      keyTtlMs: 60_000,
      claimTtlMs: 60_000,
    });
    // An idle host: the first push claims it for the job its requester adds; the pushes after it add none, in one
    // round trip or apart, while pushes to another host are judged on that host's own claim.
    expect(await queue.push('a.test', 'sync', [item('a1')])).toBe(true);
    expect(
      await queue.pushAll([
        { host: 'a.test', lane: 'list', items: [item('a2')] },
        { host: 'b.test', lane: 'sync', items: [item('b1')] },
        { host: 'b.test', lane: 'sync', items: [item('b2')] },
      ]),
    ).toEqual([false, true, false]);

    // The job starts (restore claims again), and may not give its claim up while work is pending.
    expect(await queue.restore('a.test', 'job-a')).toBe(0);
    expect(await queue.release('a.test', 'job-a')).toBe(false);
    const taken = await queue.take('a.test', 'job-a', { maxBatch: 10, minBatch: 1, lanes: 1 });
    expect(taken.map((t) => t.item.address)).toEqual(['a1', 'a2']);
    // A push while the job runs is the job's: no new job.
    expect(await queue.push('a.test', 'sync', [item('a3')])).toBe(false);
    expect(await queue.release('a.test', 'job-a')).toBe(false);
    const last = await queue.take('a.test', 'job-a', { maxBatch: 10, minBatch: 1, lanes: 1 });
    await queue.done('a.test', [...taken, ...last]);
    // Nothing pending: the claim is given up, and the next push asks for a job again.
    expect(await queue.release('a.test', 'job-a')).toBe(true);
    expect(await queue.push('a.test', 'sync', [item('a4')])).toBe(true);

    // A job that ends with work left (shutdown, failure) drops its claim: the next push adds a job.
    expect(await queue.restore('a.test', 'job-b')).toBe(0);
    await queue.unclaim('a.test', 'job-b');
    expect(await queue.push('a.test', 'sync', [item('a5')])).toBe(true);
  });

  it('lets one live job own a host: a second job leaves its in-flight items alone until its name lapses', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}owner:`,
      keyTtlMs: 60_000,
      // job-a's name must outlive the half-dozen Redis round trips between its renewals on a loaded machine.
      claimTtlMs: 3000,
    });
    await queue.push('o.test', 'sync', ['o1', 'o2'].map(item));
    expect(await queue.restore('o.test', 'job-a')).toBe(0);
    const probing = await queue.take('o.test', 'job-a', { maxBatch: 10, minBatch: 1, lanes: 1 });
    expect(probing).toHaveLength(2);
    // A second job for the host (added while job-a probes) starts: job-a renews its name, so job-b ends at once.
    await queue.push('o.test', 'sync', [item('o3')]);
    expect(await queue.renew('o.test', 'job-a')).toBe(true);
    expect(await queue.restore('o.test', 'job-b')).toBeNull();
    expect(await queue.take('o.test', 'job-b', { maxBatch: 10, minBatch: 1, lanes: 1 })).toEqual([]);
    expect(await queue.release('o.test', 'job-b')).toBe(true);
    await queue.unclaim('o.test', 'job-b');
    expect(await queue.waiting('o.test')).toBe(1);
    // job-b's release and unclaim left job-a's ownership as it was.
    expect(await queue.renew('o.test', 'job-a')).toBe(true);

    // job-a dies without a word: once its name lapses, job-b takes the host and job-a's in-flight items.
    await vi.waitFor(async () => expect(await queue.restore('o.test', 'job-b')).toBe(2), {
      timeout: 10_000,
      interval: 50,
    });
    const next = await queue.take('o.test', 'job-b', { maxBatch: 10, minBatch: 1, lanes: 1 });
    expect(next.map((t) => t.item.address)).toEqual(['o1', 'o2', 'o3']);
    // job-a was only slow: it finds the host taken, takes nothing and gives nothing up.
    expect(await queue.renew('o.test', 'job-a')).toBe(false);
    expect(await queue.take('o.test', 'job-a', { maxBatch: 10, minBatch: 1, lanes: 1 })).toEqual([]);
    expect(await queue.release('o.test', 'job-a')).toBe(true);
    expect(await queue.renew('o.test', 'job-b')).toBe(true);
    await queue.done('o.test', next);
    expect(await queue.release('o.test', 'job-b')).toBe(true);
    // Given up: the next job to start owns the host.
    expect(await queue.restore('o.test', 'job-c')).toBe(0);
  });

  it('lets a claim lapse after claimTtlMs: a requester that died before adding its job holds no host for long', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}lapse:`,
      keyTtlMs: 60_000,
      // Long enough for the second push to find the claim still held on a loaded machine.
      claimTtlMs: 2000,
    });
    expect(await queue.push('c.test', 'sync', [item('c1')])).toBe(true);
    expect(await queue.push('c.test', 'sync', [item('c2')])).toBe(false);
    // No job ever came: within a generous bound, a push asks for one again.
    await vi.waitFor(async () => expect(await queue.push('c.test', 'sync', [item('c3')])).toBe(true), {
      timeout: 10_000,
      interval: 100,
    });
  });
});

describe('one host job per MX host', () => {
  it('never opens more than mxConcurrency connections to a host across three drainer processes', async () => {
    // Two host jobs per drainer at most: six hosts busy at once need all three processes.
    const shared = options({ mxConcurrency: 2, drainConcurrency: 2 });
    const drainers = await Promise.all([1, 2, 3].map(() => startDrainer(shared)));
    const requester = createVerifier({ ...shared, drainConcurrency: 0 });
    try {
      // Per host, 8 concurrent requests of 10 addresses: 81 RCPTs, at least 5 sessions at 20 each.
      const requests = CAP_HOSTS.flatMap((_, h) =>
        Array.from({ length: 8 }, (_, r) =>
          requester.verifyDomainGroup(addresses(`cap${h}.test`, 10, r * 10), Date.now() + 60_000),
        ),
      );
      const results = (await Promise.all(requests)).flat();
      expect(results).toHaveLength(480);
      expect(results.filter((r) => r.status !== 'valid')).toEqual([]);
      for (const host of CAP_HOSTS) {
        const stats = smtp.stats.get(host)!;
        expect(stats.connections).toBeGreaterThanOrEqual(5);
        expect(stats.maxOpen).toBeLessThanOrEqual(2);
      }
      // Every drainer completes a host job once its linger is over.
      await vi.waitFor(
        () => expect(drainers.filter((d) => /host drained/.test(d.stdout()))).toHaveLength(3),
        {
          timeout: 10_000,
        },
      );
    } finally {
      await requester.close();
      await Promise.all(drainers.map((d) => d.stop('SIGTERM')));
    }
  }, 120_000);
});

describe('concurrent requests of one host', () => {
  let a: Verifier;
  let b: Verifier;
  afterAll(async () => Promise.all([a?.close(), b?.close()]));

  it('share its connections and the catch-all probe of each domain', async () => {
    const opts = options({ mxConcurrency: 2 });
    // Two verifiers stand for two workers: both drain, both request.
    a = createVerifier(opts);
    b = createVerifier(opts);
    const before = smtp.stats.get(SHARED)!.connections;
    // Eight requests of three addresses over two domains of one MX: 24 RCPTs plus one catch-all probe per domain.
    const requests = Array.from({ length: 8 }, (_, r) =>
      (r % 2 ? a : b).verifyDomainGroup(
        addresses(r < 4 ? 'one.shared.test' : 'two.shared.test', 3, r * 3),
        Date.now() + 30_000,
      ),
    );
    const results = (await Promise.all(requests)).flat();
    expect(results.filter((r) => r.status !== 'valid')).toEqual([]);
    const probes = rcpts.filter((r) => r.host === SHARED && CATCH_ALL_PROBE.test(r.address));
    expect(probes.map((p) => p.address.split('@')[1]).sort()).toEqual(['one.shared.test', 'two.shared.test']);
    // One connection per request would be eight; two sessions carry 40 RCPTs.
    expect(smtp.stats.get(SHARED)!.connections - before).toBeLessThanOrEqual(3);
    expect(smtp.stats.get(SHARED)!.maxOpen).toBeLessThanOrEqual(2);
  }, 60_000);

  it('add the host job once while it runs: the pushes that find its claim add none', async () => {
    const opts = options({ mxConcurrency: 2 });
    const queuePrefix = opts.keyPrefix.replace(/:+$/, '');
    const host = 'mx.one.shared.test';
    const queue = new Queue('verify-hosts', { connection: store.redis, prefix: queuePrefix });
    // What reached BullMQ for the host: the jobs created (or stored by keepLastIfActive) and the adds it
    // deduplicated (an event each).
    const adds = async () =>
      (await queue.getJobs(['completed', 'active', 'waiting', 'delayed', 'failed'])).filter(
        (j) => (j.data as { host: string }).host === host,
      ).length +
      (await store.redis.xrange(`${queuePrefix}:verify-hosts:events`, '-', '+')).filter(
        ([, fields]) => fields.includes('deduplicated') && fields.includes(host),
      ).length;
    const verifier = createVerifier(opts);
    try {
      const before = await adds();
      const answers: Promise<VerificationResult[]>[] = [];
      for (let r = 0; r < 6; r++) {
        const batch = addresses('one.shared.test', 3, 200 + r * 3);
        answers.push(verifier.verifyDomainGroup(batch, Date.now() + 30_000));
        // The next request comes while the host's job is probing this one.
        await vi.waitFor(() => expect(rcpts.some((x) => x.address === batch[0])).toBe(true), {
          timeout: 20_000,
          interval: 5,
        });
      }
      const results = (await Promise.all(answers)).flat();
      expect(results.filter((x) => x.status !== 'valid')).toEqual([]);
      // Adding the job on every push would be six adds (the five later ones stored or deduplicated); a second
      // add is tolerated (a push late enough to find the claim given up).
      const added = (await adds()) - before;
      expect(added).toBeGreaterThanOrEqual(1);
      expect(added).toBeLessThanOrEqual(2);
    } finally {
      await verifier.close();
      await queue.close();
    }
  }, 60_000);
});

describe('synchronous work before list work', () => {
  it('probes the waiting synchronous addresses before the list addresses queued earlier', async () => {
    const opts = options({ mxConcurrency: 1 });
    const requester = createVerifier({ ...opts, drainConcurrency: 0 });
    const list = addresses('order.test', 12, 0);
    const sync = addresses('order.test', 3, 100);
    // No drainer yet: both wait at the host, the list's first.
    const listDone = requester.verifyDomainGroup(list);
    const waitFor = async (lane: string, n: number) => {
      const key = `${opts.keyPrefix}host-work:mx.order.test:${lane}`;
      while ((await store.redis.llen(key)) < n) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await waitFor('list', list.length);
    const syncDone = requester.verifyDomainGroup(sync, Date.now() + 30_000);
    await waitFor('sync', sync.length);
    const drainer = createVerifier(opts);
    try {
      await Promise.all([listDone, syncDone]);
      const order = rcpts
        .filter((r) => r.host === ORDER && !CATCH_ALL_PROBE.test(r.address))
        .map((r) => r.address);
      expect(order.slice(0, 3).sort()).toEqual([...sync].sort());
      expect(order.slice(3).sort()).toEqual([...list].sort());
    } finally {
      await requester.close();
      await drainer.close();
    }
  }, 60_000);
});

describe('a host job lost', () => {
  it('is added again by the requester still waiting for it', async () => {
    const opts = options({ failoverMs: 1000 });
    const requester = createVerifier({ ...opts, drainConcurrency: 0 });
    const queue = new Queue('verify-hosts', {
      connection: store.redis,
      prefix: opts.keyPrefix.replace(/:+$/, ''),
    });
    try {
      const answer = requester.verifyDomainGroup(['ann@order.test'], Date.now() + 30_000);
      // No drainer yet: the job waits; an operator (or a lost Redis write) removes it.
      let jobs: Awaited<ReturnType<typeof queue.getWaiting>> = [];
      await vi.waitFor(async () => expect((jobs = await queue.getWaiting())).toHaveLength(1), {
        timeout: 10_000,
      });
      await jobs[0]!.remove();
      expect(await queue.getWaiting()).toHaveLength(0);
      // Within a failover period the requester has added it again, and a drainer that starts now serves it.
      await vi.waitFor(async () => expect(await queue.getWaiting()).toHaveLength(1), { timeout: 5000 });
      const drainer = createVerifier(opts);
      try {
        expect((await answer)[0]!.status).toBe('valid');
      } finally {
        await drainer.close();
      }
    } finally {
      await requester.close();
      await queue.close();
    }
  }, 60_000);
});

describe('the host work lost with Redis’s data', () => {
  it('is pushed again by the requester still waiting for it, which is answered long before its deadline', async () => {
    const opts = options({ failoverMs: 1000 });
    const requester = createVerifier({ ...opts, drainConcurrency: 0 });
    const queue = new Queue('verify-hosts', {
      connection: store.redis,
      prefix: opts.keyPrefix.replace(/:+$/, ''),
    });
    let drainer: Verifier | undefined;
    try {
      const asked = Date.now();
      const answer = requester.verifyDomainGroup(['cid@order.test', 'dee@order.test'], asked + 30_000);
      await vi.waitFor(async () => expect(await queue.getWaiting()).toHaveLength(1), { timeout: 10_000 });
      await vi.waitFor(
        async () => expect(await store.redis.keys(`${opts.keyPrefix}dispatch-alive:*`)).toHaveLength(1),
        { timeout: 10_000 },
      );
      // Redis restarted empty, as far as this deployment's keys go: the pending items, the host's claim, its job
      // and the requester's marker are gone.
      let cursor = '0';
      do {
        const [next, keys] = await store.redis.scan(cursor, 'MATCH', `${opts.keyPrefix}*`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await store.redis.del(...keys);
      } while (cursor !== '0');
      drainer = createVerifier(opts);
      const results = await answer;
      expect(results.map((r) => r.status)).toEqual(['valid', 'valid']);
      // Not at the deadline (30 s): within a few failover periods (1 s each) of the loss.
      expect(Date.now() - asked).toBeLessThan(20_000);
    } finally {
      await drainer?.close();
      await requester.close();
      await queue.close();
    }
  }, 60_000);
});

describe('the marker of a verifier whose connection was not ready', () => {
  it('is written at a later check, without taking the pending work for lost', async () => {
    // A connection without an offline queue, as the deployments' are: the marker's first write fails.
    const cold = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false });
    const opts = options({ failoverMs: 1000, redis: cold });
    const requester = createVerifier({ ...opts, drainConcurrency: 0 });
    try {
      // The request comes once the connections are up, as a job reaches a worker that has started.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const answer = requester.verifyDomainGroup(['eve@order.test', 'fay@order.test'], Date.now() + 4000);
      // Three checks later: the two items wait once each, nothing was pushed again.
      await new Promise((resolve) => setTimeout(resolve, 3500));
      const pending = await store.redis.keys(`${opts.keyPrefix}host-work:*:sync`);
      expect(pending).toHaveLength(1);
      expect(await store.redis.llen(pending[0]!)).toBe(2);
      expect(await store.redis.keys(`${opts.keyPrefix}dispatch-alive:*`)).toHaveLength(1);
      await answer;
    } finally {
      await requester.close();
      cold.disconnect();
    }
  }, 30_000);
});

describe('a drainer SIGKILLed mid-probe', () => {
  it('loses nothing: the host job is taken over and its in-flight items are probed again', async () => {
    // The default failover (5 s lock, 2.5 s stalled check).
    const opts = options({ mxConcurrency: 1, smtpPort: frozen.port });
    const requester = createVerifier({ ...opts, drainConcurrency: 0 });
    const first = await startDrainer(opts);
    const emails = ['ann@freeze.test', 'ben@freeze.test', 'nobody@freeze.test'];
    const answer = requester.verifyDomainGroup(emails, Date.now() + 60_000);
    await frozenRcptSeen; // the first drainer's session froze after the catch-all probe
    const second = await startDrainer(opts);
    // A second job for the host while the first lives (what deduplication allows once a job has stalled): the
    // second drainer runs it, and it leaves the live job's host and in-flight items alone.
    const hostJobs = new Queue('verify-hosts', {
      connection: store.redis,
      prefix: opts.keyPrefix.replace(/:+$/, ''),
    });
    const intruder = await hostJobs.add('drain', { host: 'mx.freeze.test' }, { jobId: 'intruder' });
    await vi.waitFor(async () => expect(await intruder.isCompleted()).toBe(true), { timeout: 30_000 });
    expect((await hostJobs.getJob('intruder'))!.returnvalue).toMatchObject({
      ownedElsewhere: true,
      restored: 0,
    });
    await hostJobs.close();
    expect(frozen.stats.get(FREEZE)!.connections).toBe(1);
    first.child.kill('SIGKILL');
    await first.exited;
    try {
      const results = await answer;
      expect(results.map((r) => r.status)).toEqual(['valid', 'valid', 'invalid']);
      expect(results[2]!.reason).toBe('mailbox_not_found');
      expect(frozen.stats.get(FREEZE)!.connections).toBe(2);
      // The second drainer's attempt started by taking the dead one's items back.
      // Logged when the job ends: after its takeover linger (VERIFY_FAILOVER_MS).
      await vi.waitFor(() => expect(second.stdout()).toMatch(/"restored":3/), { timeout: 30_000 });
    } finally {
      await requester.close();
      await second.stop('SIGTERM');
    }
  }, 120_000);
});
