import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import { isInt4Id } from '../db/int4.js';
import { applyViewBatch } from '../db/repositories/view-batches.js';
import type { RedisClient } from '../redis.js';

/**
 * Question views are counted without touching PostgreSQL on the read path: a read adds one to a field of a Redis
 * hash (HINCRBY), and the `views` worker flushes the hash to PostgreSQL every few seconds in batches.
 *
 * Exactly once, across crashes:
 * 1. claim: a Lua script atomically renames the pending hash to `batch:<id>` and adds the id to the batch set, so
 *    views arriving meanwhile start a new pending hash and nothing is read twice or dropped.
 * 2. apply: one PostgreSQL transaction records the batch id in view_batches (primary key) and adds the counts.
 * 3. release: the batch key and its id leave Redis together (MULTI).
 * A worker dying after 1 leaves the batch in the set for the next flush; dying after 2 leaves a batch whose id is
 * recorded, which the next flush only releases. Every key shares the configured prefix (one Redis Cluster slot).
 */

export const viewKeys = (prefix: string) => ({
  pending: `${prefix}:views:pending`,
  batches: `${prefix}:views:batches`,
  batch: (id: string) => `${prefix}:views:batch:${id}`,
});

const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('RENAME', KEYS[1], KEYS[3])
redis.call('SADD', KEYS[2], ARGV[1])
return 1`;

/** The hot path: one Redis command per counted view. */
export function viewCounter(redis: RedisClient, prefix: string) {
  const { pending } = viewKeys(prefix);
  return {
    async record(questionId: number): Promise<void> {
      await redis.hincrby(pending, String(questionId), 1);
    },
  };
}

export interface FlushResult {
  batches: number;
  applied: number;
  views: number;
}

export function viewFlusher(deps: { db: Db; redis: RedisClient; prefix: string }) {
  const keys = viewKeys(deps.prefix);

  /** Moves the pending views into a new batch; null when there were none. */
  async function claim(): Promise<string | null> {
    const id = randomUUID();
    const moved = await deps.redis.eval(CLAIM, 3, keys.pending, keys.batches, keys.batch(id), id);
    return moved === 1 ? id : null;
  }

  /** Adds a batch's counts to questions.views unless the batch was applied before; true when applied now. */
  async function apply(batchId: string): Promise<{ applied: boolean; views: number }> {
    const raw = await deps.redis.hgetall(keys.batch(batchId));
    const counts = Object.entries(raw)
      .map(([field, value]) => [Number(field), Number(value)] as const)
      .filter(([id, n]) => isInt4Id(id) && Number.isInteger(n) && n > 0)
      .sort(([a], [b]) => a - b);
    const applied = await applyViewBatch(deps.db, batchId, counts);
    return { applied, views: applied ? counts.reduce((sum, [, n]) => sum + n, 0) : 0 };
  }

  async function release(batchId: string): Promise<void> {
    await deps.redis.multi().del(keys.batch(batchId)).srem(keys.batches, batchId).exec();
  }

  return {
    claim,
    apply,
    release,
    /** Batches claimed but not yet released (left by a crash, or the one being flushed). */
    pendingBatches: () => deps.redis.smembers(keys.batches),

    /**
     * Claims the pending views and applies every unreleased batch, the leftovers of crashed flushes included. A batch
     * that fails stays in Redis and does not hold back the others; the flush then throws so the job is retried.
     */
    async flush(): Promise<FlushResult> {
      await claim();
      const result: FlushResult = { batches: 0, applied: 0, views: 0 };
      const failures: unknown[] = [];
      for (const id of await deps.redis.smembers(keys.batches)) {
        try {
          const { applied, views } = await apply(id);
          await release(id);
          result.batches++;
          if (applied) result.applied++;
          result.views += views;
        } catch (err) {
          failures.push(err);
        }
      }
      if (failures.length > 0) throw failures[0];
      return result;
    },
  };
}
