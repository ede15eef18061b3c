import type { RedisClient } from '../redis.js';
import type { VerificationResult } from './types.js';

/**
 * Verdicts reused for the same address (issue 20, "Freshness"): a result is kept in Redis for `ttlMs`
 * (VERIFY_RESULT_TTL_MS), and a request may accept one up to `max_age` seconds old, or none with `max_age: 0`. A
 * reused verdict costs no DNS query and no SMTP connection. `unknown` verdicts are never kept: they mean "ask again
 * later", and a cached one would stop the asking. Keys hold the address as probed (local part as typed, ASCII domain).
 */

export interface ResultCacheOptions {
  redis: RedisClient;
  keyPrefix: string;
  /** Lifetime of a kept verdict, ms; 0 turns the cache off. */
  ttlMs: number;
}

export interface ReadOptions {
  /** Oldest acceptable verdict, seconds; 0 reads nothing; undefined accepts any still kept. */
  maxAgeSec?: number;
}

export function createResultCache(opts: ResultCacheOptions) {
  const key = (address: string): string => `${opts.keyPrefix}result:${address}`;

  /** Kept verdicts by address, for those young enough; the others are missing from the map. */
  async function read(addresses: readonly string[], { maxAgeSec }: ReadOptions = {}) {
    const found = new Map<string, VerificationResult>();
    if (opts.ttlMs <= 0 || maxAgeSec === 0 || addresses.length === 0) return found;
    const raws = await opts.redis.mget(...addresses.map(key));
    const oldest = maxAgeSec === undefined ? -Infinity : Date.now() - maxAgeSec * 1000;
    raws.forEach((raw, i) => {
      if (raw === null) return;
      const result = JSON.parse(raw) as VerificationResult;
      if (Date.parse(result.verified_at) >= oldest) found.set(addresses[i]!, result);
    });
    return found;
  }

  /** Keeps fresh verdicts (not `unknown` ones) for the next requests. */
  async function write(
    entries: ReadonlyArray<{ address: string; result: VerificationResult }>,
  ): Promise<void> {
    if (opts.ttlMs <= 0) return;
    const keep = entries.filter((e) => e.result.status !== 'unknown' && !e.result.cached);
    if (keep.length === 0) return;
    // Plain commands: on the verifier's auto-pipelined connection they leave in one write with everything else.
    await Promise.all(
      keep.map(({ address, result }) =>
        opts.redis.set(key(address), JSON.stringify(result), 'PX', opts.ttlMs),
      ),
    );
  }

  return { read, write };
}

export type ResultCache = ReturnType<typeof createResultCache>;
