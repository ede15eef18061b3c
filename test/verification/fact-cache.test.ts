import { afterAll, describe, expect, it } from 'vitest';
import { createFactCache } from '../../shared/verification/fact-cache.js';
import { testRedis } from './helpers.js';

// Domain facts live in Redis for every process, with a copy in the process that read or wrote them. The copy is
// what spares a busy domain a Redis round trip per probe; it must never outlive the Redis key it mirrors.

const store = testRedis('fact-cache');
afterAll(() => store.cleanup());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fact cache', () => {
  it('answers from its copy once read, and forgets it when the Redis key expires', async () => {
    const key = `${store.prefix}expiring`;
    const facts = createFactCache<{ kind: string }>({ redis: store.redis });
    // Seconds, not milliseconds: the copy must still be there after two Redis round trips on a loaded machine.
    await store.redis.set(key, JSON.stringify({ kind: 'mx' }), 'PX', 3000);
    expect(await facts.get(key)).toEqual({ kind: 'mx' });
    // Gone from Redis: only the copy can answer now.
    await store.redis.del(key);
    expect(await facts.get(key)).toEqual({ kind: 'mx' });
    await sleep(3500);
    expect(await facts.get(key)).toBeNull();
  });

  it('keeps a copy no longer than localMaxMs, however long the fact lives', async () => {
    const key = `${store.prefix}long-lived`;
    // A bound of a second, so that the copy surely outlives the set, ttl and del round trips before the first get.
    const facts = createFactCache<{ kind: string }>({ redis: store.redis, localMaxMs: 1000 });
    await facts.set(key, { kind: 'null_mx' }, 3600);
    expect(await store.redis.ttl(key)).toBeGreaterThan(3500);
    await store.redis.del(key);
    expect(await facts.get(key)).toEqual({ kind: 'null_mx' });
    await sleep(1200);
    expect(await facts.get(key)).toBeNull();
  });

  it('writes facts in the codec the other processes read', async () => {
    const key = `${store.prefix}catch-all`;
    const codec = { encode: (v: boolean) => (v ? '1' : '0'), decode: (raw: string) => raw === '1' };
    await createFactCache<boolean>({ redis: store.redis }, codec).set(key, false, 60);
    expect(await store.redis.get(key)).toBe('0');
    // Another process, with no copy of its own, reads it from Redis.
    expect(await createFactCache<boolean>({ redis: store.redis }, codec).get(key)).toBe(false);
  });
});
