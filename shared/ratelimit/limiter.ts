import { KEY_GROUPS, keyGroup, type KeyspaceConfig } from '../keyspace.js';
import type { RedisClient } from '../redis.js';
import { LimitWindow, type Store, type WindowResult } from './windows.js';

/**
 * Plans with an hourly and a daily budget, both applied to every request. A request is admitted only when
 * every window has room; a refused request gives its points back to every window, so a client hammering at
 * its limit does not eat into its daily budget, and a batch that does not fit costs nothing.
 *
 * Why refunds cannot over-admit: a window's counter is always "points admitted + points of refused requests
 * not yet refunded", never less than what was admitted, so admitted points never exceed the limit, whatever
 * the number of processes. The price is that a request racing a refusal may see a counter a few points too
 * high for the few milliseconds before the refund (stricter, never looser).
 */

export interface Budget {
  hour: number;
  day: number;
}

export interface WindowDurations {
  /** Seconds; 3600 in production, a few seconds in tests that watch a window end. */
  hour: number;
  day: number;
}

export const PRODUCTION_WINDOWS: WindowDurations = { hour: 3600, day: 86_400 };

export interface Decision {
  allowed: boolean;
  /** The window closest to running out (or, when refused, the one that refused for longest). */
  window: string;
  limit: number;
  remaining: number;
  /** Unix time in seconds when that window's budget is whole again. */
  reset: number;
  /** Seconds before retrying can succeed; set when refused. */
  retryAfter?: number;
  /** Where the decision was counted: `memory` while Redis is unavailable. */
  store: Store;
}

/** Prefix of a service's rate-limit counters (the verify service's are also charged and refunded by lists). */
export const rateLimitKeyPrefix = (config: KeyspaceConfig, service: string): string =>
  `${keyGroup(config, KEY_GROUPS.rateLimit)}:ratelimit:${service}`;

export interface RateLimiterOptions<P extends string> {
  redis: RedisClient;
  /** Full prefix for this limiter's keys; starts with config.queuePrefix. */
  keyPrefix: string;
  plans: Record<P, Budget>;
  windows?: WindowDurations;
  /** How long a Redis answer may take before the request is counted in memory instead. */
  redisTimeoutMs?: number;
  onStoreError?: (err: Error) => void;
}

export interface PlanLimiter<P extends string> {
  consume(plan: P, key: string, points?: number): Promise<Decision>;
}

export function createPlanLimiter<P extends string>(options: RateLimiterOptions<P>): PlanLimiter<P> {
  const durations = options.windows ?? PRODUCTION_WINDOWS;
  const onStoreError = options.onStoreError ?? (() => {});
  const windowsByPlan = new Map<P, LimitWindow[]>();
  for (const [plan, budget] of Object.entries(options.plans) as [P, Budget][]) {
    windowsByPlan.set(
      plan,
      (['hour', 'day'] as const).map(
        (window) =>
          new LimitWindow({
            redis: options.redis,
            keyPrefix: `${options.keyPrefix}:${plan}:${window}`,
            window,
            limit: budget[window],
            durationSeconds: durations[window],
            timeoutMs: options.redisTimeoutMs ?? 250,
            onStoreError,
          }),
      ),
    );
  }

  return {
    async consume(plan, key, points = 1) {
      const windows = windowsByPlan.get(plan);
      if (!windows) throw new Error(`Unknown rate-limit plan ${plan}`);
      const results = await Promise.all(windows.map((w) => w.consume(key, points)));
      const refused = results.filter((r) => r.consumed > r.limit);
      if (refused.length > 0) {
        await Promise.all(windows.map((w, i) => w.refund(key, points, results[i]!.store)));
        return refusal(refused, points);
      }
      return admission(results);
    },
  };
}

const resetAt = (r: WindowResult, now: number) => Math.ceil((now + r.msBeforeReset) / 1000);

// The window with the least room left; on a tie the one that resets later, which is the stricter promise.
function admission(results: WindowResult[]): Decision {
  const now = Date.now();
  const tightest = results.reduce((best, r) => {
    const room = r.limit - r.consumed;
    const bestRoom = best.limit - best.consumed;
    return room < bestRoom || (room === bestRoom && r.msBeforeReset > best.msBeforeReset) ? r : best;
  });
  return {
    allowed: true,
    window: tightest.window,
    limit: tightest.limit,
    remaining: Math.max(0, tightest.limit - tightest.consumed),
    reset: resetAt(tightest, now),
    store: storeOf(results),
  };
}

// Retrying helps only once every refusing window has reset, so the one that resets last is reported.
function refusal(refused: WindowResult[], points: number): Decision {
  const now = Date.now();
  const blocking = refused.reduce((a, b) => (b.msBeforeReset > a.msBeforeReset ? b : a));
  return {
    allowed: false,
    window: blocking.window,
    limit: blocking.limit,
    // What is left once this refused request's points are given back.
    remaining: Math.max(0, blocking.limit - (blocking.consumed - points)),
    reset: resetAt(blocking, now),
    retryAfter: Math.max(1, Math.ceil(blocking.msBeforeReset / 1000)),
    store: storeOf(refused),
  };
}

const storeOf = (results: WindowResult[]): Store =>
  results.some((r) => r.store === 'memory') ? 'memory' : 'redis';
