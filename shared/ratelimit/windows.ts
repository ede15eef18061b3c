import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClient } from '../redis.js';

/**
 * One fixed window (an hour, a day) of one plan, counted in Redis with rate-limiter-flexible's atomic
 * SET NX EX + INCRBY script, so any number of API processes share one budget. When Redis fails or is slower
 * than `timeoutMs`, the window is counted in this process's memory instead (the "insurance" store): limits
 * keep applying per process rather than switching off, and the service keeps answering.
 */

export type Store = 'redis' | 'memory';

export interface WindowResult {
  window: string;
  limit: number;
  /** Points used in the window, this request included (before any refund). */
  consumed: number;
  /** Milliseconds until the window ends and its budget is whole again. */
  msBeforeReset: number;
  store: Store;
}

// Takes back points only while the window's key still lives: a refund must never leak into the next window.
const REFUND_SCRIPT = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('decrby', KEYS[1], ARGV[1]) end return 0`;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export interface WindowOptions {
  redis: RedisClient;
  /** Full Redis key prefix of this window, e.g. `{agora}:ratelimit:qa:anonymous:hour`. */
  keyPrefix: string;
  window: string;
  limit: number;
  durationSeconds: number;
  timeoutMs: number;
  onStoreError: (err: Error) => void;
}

export class LimitWindow {
  private readonly redisLimiter: RateLimiterRedis;
  private readonly memoryLimiter: RateLimiterMemory;

  constructor(private readonly options: WindowOptions) {
    const { redis, keyPrefix, limit, durationSeconds } = options;
    this.redisLimiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points: limit,
      duration: durationSeconds,
    });
    this.memoryLimiter = new RateLimiterMemory({ keyPrefix, points: limit, duration: durationSeconds });
  }

  get limit(): number {
    return this.options.limit;
  }

  /** Adds `points` for `key` and reports the window's state; never throws for a store failure. */
  async consume(key: string, points: number): Promise<WindowResult> {
    try {
      const res = await withTimeout(
        this.settle(this.redisLimiter.consume(key, points)),
        this.options.timeoutMs,
      );
      return this.result(res, 'redis');
    } catch (err) {
      this.options.onStoreError(err as Error);
      return this.result(await this.settle(this.memoryLimiter.consume(key, points)), 'memory');
    }
  }

  /** Gives back the points of a request that was refused, in the store that counted them. */
  async refund(key: string, points: number, store: Store): Promise<void> {
    if (store === 'memory') {
      await this.memoryLimiter.reward(key, points);
      return;
    }
    try {
      const redisKey = `${this.options.keyPrefix}:${key}`;
      await withTimeout(
        this.options.redis.eval(REFUND_SCRIPT, 1, redisKey, String(points)),
        this.options.timeoutMs,
      );
    } catch (err) {
      // A lost refund only makes the window stricter for its remaining time; it can never over-admit.
      this.options.onStoreError(err as Error);
    }
  }

  // rate-limiter-flexible rejects with a RateLimiterRes when the budget is exceeded and with an Error when the
  // store fails: the first is an answer, the second must reach the fallback.
  private async settle(promise: Promise<RateLimiterRes>): Promise<RateLimiterRes> {
    try {
      return await promise;
    } catch (err) {
      if (err instanceof RateLimiterRes) return err;
      throw err;
    }
  }

  private result(res: RateLimiterRes, store: Store): WindowResult {
    return {
      window: this.options.window,
      limit: this.options.limit,
      consumed: res.consumedPoints,
      msBeforeReset: Math.max(0, res.msBeforeNext),
      store,
    };
  }
}
