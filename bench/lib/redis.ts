import { Redis } from 'ioredis';

/** The benches' Redis; every bench owns the keys under its own QUEUE_PREFIX and deletes them before and after. */
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function withRedis<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL, { connectTimeout: 5000, maxRetriesPerRequest: 2 });
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key that starts with `prefix` (SCAN + UNLINK, so a large keyspace does not block Redis). */
export const deleteKeys = (prefix: string): Promise<void> =>
  withRedis(async (redis) => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  });

/** How many keys match a glob pattern (KEYS: for the small bench keyspaces only). */
export const countKeys = (pattern: string): Promise<number> =>
  withRedis(async (redis) => (await redis.keys(pattern)).length);
