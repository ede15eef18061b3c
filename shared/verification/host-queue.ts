import { ownSlot } from '../keyspace.js';
import type { RedisClient } from '../redis.js';

/**
 * The work waiting for one MX host, in Redis: what BullMQ's host job (verify-hosts) cannot carry itself, because
 * many requesters add to a host's work while one drainer takes from it. Per host, two pending lists (synchronous
 * requests are taken before list work) and one in-flight list: the drainer moves what it takes to in-flight in
 * the same script, and removes an item once its reply is sent. Only one attempt of a host job is active at a time
 * (deduplication), so at the start of an attempt whatever is still in flight was a dead attempt's, and goes back
 * to the front of the pending work.
 */

/** Which pending list an item waits in: `sync` (/verify, /bulk-verify) is always drained before `list`. */
export type HostLane = 'sync' | 'list';

export interface HostWorkItem {
  /** Identifies the waiting requester's item in its replies. */
  ticket: string;
  /** The requester's reply stream (host-replies.ts). */
  replyTo: string;
  /** ASCII domain. */
  domain: string;
  /** Address as sent in RCPT TO. */
  address: string;
  smtputf8: boolean;
  /** Epoch ms after which nobody waits for the answer: the drainer drops the item unprobed. */
  answerBy: number;
  /** The request's max_age: the drainer answers from the result cache when a verdict young enough is kept. */
  maxAgeSec?: number;
}

export interface TakeLimits {
  /** Most items one take returns (a session's RCPT budget, less the catch-all probe). */
  maxBatch: number;
  /** Fewest items a take returns while more wait: below this a share is not worth a session's overhead. */
  minBatch: number;
  /** Sessions sharing the waiting work: a take returns its share of it, so the last items are spread. */
  lanes: number;
}

// Takes a share of the waiting work, synchronous first, into the in-flight list: one step, so no item is ever
// neither pending nor in flight.
const TAKE = `
local waiting = redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2])
if waiting == 0 then return {} end
local n = math.ceil(waiting / tonumber(ARGV[3]))
n = math.min(tonumber(ARGV[1]), math.max(tonumber(ARGV[2]), n))
local taken = {}
for i = 1, n do
  local item = redis.call('LMOVE', KEYS[1], KEYS[3], 'LEFT', 'RIGHT')
  if not item then item = redis.call('LMOVE', KEYS[2], KEYS[3], 'LEFT', 'RIGHT') end
  if not item then break end
  taken[#taken + 1] = item
end
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return taken
`;

// A dead attempt's in-flight items back to the front of the synchronous list, in their order.
const RESTORE = `
local moved = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') do moved = moved + 1 end
if moved > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
return moved
`;

/**
 * Where a push is announced (the host's name), so that a host job lingering for more work takes it at once instead
 * of polling. At most once, like all pub/sub: a lost announcement costs the linger, and the job the requester adds
 * after its push (deduplicated, keepLastIfActive) drains the work anyway.
 */
export const hostWakeChannel = (keyPrefix: string): string => `${keyPrefix}host-wake`;

export interface HostQueueOptions {
  redis: RedisClient;
  keyPrefix: string;
  /** How long a host's lists outlive their last write: longer than any item may wait (its answerBy). */
  keyTtlMs: number;
  /**
   * Redis Cluster: a host's three lists (one script uses them together) in a slot of their own, the host's name
   * as hash tag, so that hosts spread over the shards instead of all sitting in `keyPrefix`'s slot.
   */
  hostSlots?: boolean;
}

export interface TakenItem {
  item: HostWorkItem;
  /** The item as stored, to remove it from the in-flight list. */
  raw: string;
}

export function createHostQueue(opts: HostQueueOptions) {
  const { redis } = opts;
  const wakeChannel = hostWakeChannel(opts.keyPrefix);
  const hostKey = (host: string): string =>
    opts.hostSlots ? ownSlot(`${opts.keyPrefix}host-work:`, host) : `${opts.keyPrefix}host-work:${host}`;
  const keys = (host: string) => ({
    sync: `${hostKey(host)}:sync`,
    list: `${hostKey(host)}:list`,
    inFlight: `${hostKey(host)}:in-flight`,
  });

  return {
    /** Adds a requester's items to the host's pending work. */
    async push(host: string, lane: HostLane, items: readonly HostWorkItem[]): Promise<void> {
      if (items.length === 0) return;
      const key = keys(host)[lane];
      await redis
        .multi()
        .rpush(key, ...items.map((i) => JSON.stringify(i)))
        .pexpire(key, opts.keyTtlMs)
        .publish(wakeChannel, host)
        .exec();
    },

    /** Puts a dead attempt's in-flight items back in front; returns how many. */
    async restore(host: string): Promise<number> {
      const k = keys(host);
      return (await redis.eval(RESTORE, 2, k.inFlight, k.sync, opts.keyTtlMs)) as number;
    },

    /** Pending items, both lanes. */
    async waiting(host: string): Promise<number> {
      const k = keys(host);
      const [[, sync], [, list]] = (await redis.multi().llen(k.sync).llen(k.list).exec()) as [
        [Error | null, number],
        [Error | null, number],
      ];
      return sync + list;
    },

    /** A share of the pending work, moved to in flight. */
    async take(host: string, limits: TakeLimits): Promise<TakenItem[]> {
      const k = keys(host);
      const raws = (await redis.eval(
        TAKE,
        3,
        k.sync,
        k.list,
        k.inFlight,
        limits.maxBatch,
        limits.minBatch,
        Math.max(1, limits.lanes),
        opts.keyTtlMs,
      )) as string[];
      return raws.map((raw) => ({ raw, item: JSON.parse(raw) as HostWorkItem }));
    },

    /** Items answered (or dropped): off the in-flight list. */
    async done(host: string, taken: readonly TakenItem[]): Promise<void> {
      if (taken.length === 0) return;
      const key = keys(host).inFlight;
      const pipeline = redis.pipeline();
      for (const t of taken) pipeline.lrem(key, 1, t.raw);
      await pipeline.exec();
    },
  };
}

export type HostQueue = ReturnType<typeof createHostQueue>;
