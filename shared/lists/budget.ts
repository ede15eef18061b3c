import type { Config } from '../config.js';
import { createPlanLimiter, rateLimitKeyPrefix, type Decision } from '../ratelimit/limiter.js';
import type { RedisClient } from '../redis.js';

/**
 * A list's charge against its key's verification budget: one point per distinct address, taken at creation from
 * the same Redis windows the verification service's rate-limit plugin counts in (same key names), so lists,
 * /verify and /bulk-verify share one budget. A cancel gives back the points of the addresses never verified, but
 * only into the windows that were charged: a refund into a later window would hand out budget never spent there.
 */

const WINDOWS = ['hour', 'day'] as const;

/** When each charged window ends (epoch ms): the refund's proof that a window is still the one charged. */
export type ChargeWindows = Record<(typeof WINDOWS)[number], number>;

export interface Charge {
  /** Null when rate limiting is off: nothing was counted. */
  decision: Decision | null;
  windows: ChargeWindows | null;
}

export interface ListBudget {
  /**
   * The smallest whole window (its points and name): a list with more distinct addresses never fits, however
   * long its owner waits. Null when rate limiting is off.
   */
  ceiling(): { window: (typeof WINDOWS)[number]; limit: number } | null;
  charge(keyId: number, points: number): Promise<Charge>;
  refund(keyId: number, points: number, windows: ChargeWindows | null): Promise<void>;
}

// Takes points back only while the key lives and still ends when it did at the charge (± 2 s of clock and
// round-trip slack): the same window, never its successor. Never below zero.
const REFUND_SCRIPT = `
local ttl = redis.call('pttl', KEYS[1])
if ttl <= 0 then return 0 end
if math.abs(ttl - tonumber(ARGV[2])) > 2000 then return 0 end
local left = tonumber(redis.call('get', KEYS[1]) or '0')
local points = math.min(tonumber(ARGV[1]), left)
if points <= 0 then return 0 end
return redis.call('decrby', KEYS[1], points)`;

export function createListBudget(
  redis: RedisClient,
  config: Pick<Config, 'rateLimits' | 'queuePrefix' | 'redisClusterNodes'>,
): ListBudget {
  const prefix = rateLimitKeyPrefix(config, 'verify');
  const limiter = createPlanLimiter({
    redis,
    keyPrefix: prefix,
    plans: { verify: config.rateLimits.verify },
  });
  const redisKey = (window: string, keyId: number) => `${prefix}:verify:${window}:key:${keyId}`;

  const budget = config.rateLimits.verify;
  return {
    ceiling() {
      if (!config.rateLimits.enabled) return null;
      // The hour's budget unless the day's is configured smaller.
      return budget.day < budget.hour
        ? { window: 'day', limit: budget.day }
        : { window: 'hour', limit: budget.hour };
    },
    async charge(keyId, points) {
      if (!config.rateLimits.enabled) return { decision: null, windows: null };
      const decision = await limiter.consume('verify', `key:${keyId}`, points);
      if (!decision.allowed || decision.store !== 'redis') return { decision, windows: null };
      const now = Date.now();
      const ttls = await Promise.all(WINDOWS.map((w) => redis.pttl(redisKey(w, keyId)).catch(() => -1)));
      if (ttls.some((t) => t <= 0)) return { decision, windows: null };
      return { decision, windows: { hour: now + ttls[0]!, day: now + ttls[1]! } };
    },
    async refund(keyId, points, windows) {
      if (!config.rateLimits.enabled || windows === null || points <= 0) return;
      const now = Date.now();
      await Promise.all(
        WINDOWS.map((w) =>
          redis.eval(REFUND_SCRIPT, 1, redisKey(w, keyId), String(points), String(windows[w] - now)),
        ),
      );
    },
  };
}
