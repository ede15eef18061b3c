import { afterAll, describe, expect, it } from 'vitest';
import { createMxSemaphore, SemaphoreTimeoutError } from '../../shared/verification/mx-semaphore.js';
import { createSubscriptions } from '../../shared/verification/subscriptions.js';
import { freshPrefix, testRedis } from './helpers.js';

const store = testRedis('semaphore');
const subscriptions = createSubscriptions(store.redis);
afterAll(async () => {
  subscriptions.close();
  await store.cleanup();
});

// One subscriber connection for every semaphore of the file, as a verifier shares its own.
const semaphore = (
  prefix: string,
  over: { limit?: number; leaseMs?: number; renewMs?: number; pacingMs?: number } = {},
) =>
  createMxSemaphore({
    redis: store.redis,
    keyPrefix: prefix,
    limit: 2,
    leaseMs: 10_000,
    renewMs: 1000,
    pacingMs: 0,
    subscriptions,
    ...over,
  });

describe('MX semaphore', () => {
  it('grants `limit` slots per host, shared by every instance on the same Redis', async () => {
    const prefix = freshPrefix(store.prefix);
    const [a, b] = [semaphore(prefix), semaphore(prefix)];
    const r1 = await a.acquire('mx.example.org');
    const r2 = await b.acquire('mx.example.org');
    expect(await store.redis.zcard(`${prefix}mx-slots:mx.example.org`)).toBe(2);
    // Another host has its own slots.
    const other = await a.acquire('mx.other.org');

    let third = false;
    const waiting = b.acquire('mx.example.org').then((release) => {
      third = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(third).toBe(false);
    await r1();
    const r3 = await waiting;
    expect(third).toBe(true);
    await Promise.all([r2(), r3(), other()]);
    expect(await store.redis.zcard(`${prefix}mx-slots:mx.example.org`)).toBe(0);
  });

  it('gives up when the deadline passes while waiting', async () => {
    const prefix = freshPrefix(store.prefix);
    const s = semaphore(prefix, { limit: 1 });
    const release = await s.acquire('busy.example.org');
    await expect(s.acquire('busy.example.org', AbortSignal.timeout(50))).rejects.toBeInstanceOf(
      SemaphoreTimeoutError,
    );
    await release();
  });

  it('reclaims a slot whose holder died (lease expired)', async () => {
    const prefix = freshPrefix(store.prefix);
    // A holder that never renews nor releases, as a SIGKILLed worker.
    const dead = semaphore(prefix, { limit: 1, leaseMs: 50, renewMs: 3_600_000 });
    await dead.acquire('crashy.example.org');
    const release = await semaphore(prefix, { limit: 1, leaseMs: 50 }).acquire(
      'crashy.example.org',
      AbortSignal.timeout(2000),
    );
    await release();
  });

  it("keeps a live holder's slot past the lease by renewing it", async () => {
    const prefix = freshPrefix(store.prefix);
    const live = semaphore(prefix, { limit: 1, leaseMs: 400, renewMs: 50 });
    const release = await live.acquire('busy.example.org');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(
      semaphore(prefix, { limit: 1, leaseMs: 400 }).acquire('busy.example.org', AbortSignal.timeout(300)),
    ).rejects.toBeInstanceOf(SemaphoreTimeoutError);
    await release();
    expect(await store.redis.zcard(`${prefix}mx-slots:busy.example.org`)).toBe(0);
  });

  it('paces connection opens to one host', async () => {
    const prefix = freshPrefix(store.prefix);
    const s = semaphore(prefix, { pacingMs: 5000 });
    const release = await s.acquire('paced.example.org');
    await release();
    // The slot is free but the pacing gap is not over: the deadline comes first.
    await expect(s.acquire('paced.example.org', AbortSignal.timeout(50))).rejects.toBeInstanceOf(
      SemaphoreTimeoutError,
    );
    expect(await store.redis.zcard(`${prefix}mx-slots:paced.example.org`)).toBe(0);
  });
});
