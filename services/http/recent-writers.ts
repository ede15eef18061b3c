import type { RedisClient } from '../../shared/redis.js';

/**
 * Which API keys wrote within the read-your-writes window, kept in Redis (one key per writer, expiring with the
 * window) rather than in each process: a deployment runs several Q&A processes behind a load balancer, and a
 * client's read may reach another process than its write did. A read asks Redis only when it carries a key, as
 * anonymous callers cannot write. When Redis cannot say (away, slow), the read goes to the primary: always correct.
 */
export interface RecentWriters {
  /** Notes that the key wrote now (called before the write's answer leaves, so every later read sees it). */
  wrote(keyId: number): Promise<void>;
  /** true: it wrote within the window, or Redis could not say. */
  mayHaveWritten(keyId: number): Promise<boolean>;
}

/** Bound on one Redis round trip here: past it the read goes to the primary rather than waiting. */
const REDIS_TIMEOUT_MS = 500;

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis: no answer within ${REDIS_TIMEOUT_MS} ms`)),
        REDIS_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

export function recentWriters(redis: RedisClient, prefix: string, windowMs: number): RecentWriters {
  const key = (keyId: number) => `${prefix}:db:wrote:${keyId}`;
  return {
    async wrote(keyId) {
      await withTimeout(redis.set(key(keyId), '1', 'PX', windowMs));
    },
    async mayHaveWritten(keyId) {
      try {
        return (await withTimeout(redis.exists(key(keyId)))) === 1;
      } catch {
        return true;
      }
    },
  };
}
