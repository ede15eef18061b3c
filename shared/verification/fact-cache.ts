import type { RedisClient } from '../redis.js';
import { LRUCache } from 'lru-cache';

/**
 * Domain facts (DNS answers, catch-all verdicts) shared by every process through Redis keys that expire with the
 * fact, with a copy in this process so that a busy domain costs no Redis round trip per probe. A local copy lives
 * no longer than the Redis key it mirrors (its remaining PTTL when read, the fact's TTL when written), and at
 * most `localMaxMs`, so that an operator who deletes a key sees every process ask again soon after.
 */
export interface FactCacheOptions {
  redis: RedisClient;
  /** Entries kept in this process at most (default 10,000: a few MB). */
  maxEntries?: number;
  /** Longest a local copy is used, ms (default one minute). */
  localMaxMs?: number;
}

/** How a fact is written in its Redis key. */
export interface FactCodec<T> {
  encode(fact: T): string;
  decode(raw: string): T;
}

const json = { encode: JSON.stringify, decode: JSON.parse };

export function createFactCache<T extends NonNullable<unknown>>(
  opts: FactCacheOptions,
  codec: FactCodec<T> = json,
) {
  const localMaxMs = opts.localMaxMs ?? 60_000;
  const local = new LRUCache<string, T>({ max: opts.maxEntries ?? 10_000, ttl: localMaxMs });
  // Reads under way: the probes of a cold domain that start together share one round trip.
  const reading = new Map<string, Promise<T | null>>();

  /** The fact under `key`, or null when no process knows it. */
  function get(key: string): Promise<T | null> {
    const copy = local.get(key);
    if (copy !== undefined) return Promise.resolve(copy);
    let read = reading.get(key);
    if (!read) {
      read = readShared(key).finally(() => reading.delete(key));
      reading.set(key, read);
    }
    return read;
  }

  async function readShared(key: string): Promise<T | null> {
    // Two plain commands, sent together on an auto-pipelined connection (the verifier's).
    const [raw, leftMs] = await Promise.all([opts.redis.get(key), opts.redis.pttl(key)]);
    if (raw === null) return null;
    const fact = codec.decode(raw);
    if (leftMs > 0) local.set(key, fact, { ttl: Math.min(leftMs, localMaxMs) });
    return fact;
  }

  /** Stores a fact for every process, for `ttlSec` seconds. */
  async function set(key: string, fact: T, ttlSec: number): Promise<void> {
    await opts.redis.set(key, codec.encode(fact), 'EX', ttlSec);
    local.set(key, fact, { ttl: Math.min(ttlSec * 1000, localMaxMs) });
  }

  return { get, set };
}
