import { ownSlot } from '../keyspace.js';
import type { RedisClient } from '../redis.js';

/**
 * The work waiting for one MX host, in Redis: what BullMQ's host job (verify-hosts) cannot carry itself, because
 * many requesters add to a host's work while one drainer takes from it. Per host, two pending lists (synchronous
 * requests are taken before list work) and one in-flight list: the drainer moves what it takes to in-flight in
 * the same script, and removes an item once its reply is sent. Only one host job owns a host at a time (`owner`,
 * below), so when a job becomes owner whatever is still in flight was a dead attempt's, and goes back to the front
 * of the pending work.
 *
 * A third key per host, `claimed`, says that a host job will look at the pending work after now: a push that finds
 * it needs no BullMQ add (the costliest step of a push), a push that does not find it sets it and tells its caller
 * to add the job. The host job holds it while it runs and gives it up only in the same script that finds the pending
 * work empty, so no push can fall between "nothing left" and "no job". It expires (`claimTtlMs`, refreshed by each
 * take) so that a claim left by a process that died before adding its job costs at most that long; the requesters
 * still waiting re-add the job anyway (host-dispatch.ts).
 *
 * A fourth, `owner`, names the host job that serves the host, and is what makes it the only one: deduplication
 * keeps one job active per host only until that job stalls (a long probe outlives the claim, a requester re-adds the
 * job, and a second job for the host waits beside the first). A job that starts while another live job owns the
 * host ends at once, without touching its in-flight items; the owner renews its name while it runs, so a killed
 * owner's name lapses within `claimTtlMs`, and its own job, taken over by stalled-job recovery, may take it back
 * at once (same job id).
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
  /**
   * Fewest items a take of list work returns while more wait: below this a share is not worth a session's overhead.
   * Synchronous work is shared out whatever its size: a request's latency is its slowest address.
   */
  minBatch: number;
  /** Sessions sharing the waiting work: a take returns its share of it, so the last items are spread. */
  lanes: number;
}

// Every script touches the keys of ONE host only (KEYS), so that a host's keys may live on one Cluster slot.

// Adds items to a lane and announces them; returns 1 when no host job had claimed the host (the caller adds one),
// after claiming it for that job.
const PUSH = `
redis.call('RPUSH', KEYS[1], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`;

// A script's first step when it acts as the host job ARGV[1]: false when another job owns the host, else the job
// (re)names itself owner for PX ARGV[2] ms. (A lapsed name nobody took is taken back: the job was only slow.)
const OWN = `
local function own(key, job, ttl)
  local owner = redis.call('GET', key)
  if owner and owner ~= job then return false end
  redis.call('SET', key, job, 'PX', ttl)
  return true
end
`;

// Takes a share of the waiting work, synchronous first, into the in-flight list: one step, so no item is ever
// neither pending nor in flight. A caller waits for synchronous work, so it is spread over every lane; list work
// only in shares of at least ARGV[2] (a new session's overhead). First removes the items the lane has answered since its last take (ARGV[7…]: their
// replies were sent before this call), sparing a round trip of their own. Refreshes the host job's claim and
// ownership; takes nothing for a job that lost it. Returns what is still waiting after the take, then the items.
const TAKE = `${OWN}
for i = 7, #ARGV do redis.call('LREM', KEYS[3], 1, ARGV[i]) end
if not own(KEYS[5], ARGV[6], ARGV[5]) then return {0} end
redis.call('SET', KEYS[4], '1', 'PX', ARGV[5])
local sync = redis.call('LLEN', KEYS[1])
local waiting = sync + redis.call('LLEN', KEYS[2])
if waiting == 0 then return {0} end
local n = math.ceil(waiting / tonumber(ARGV[3]))
if sync == 0 then n = math.max(tonumber(ARGV[2]), n) end
n = math.min(tonumber(ARGV[1]), n)
local out = {0}
for i = 1, n do
  local item = redis.call('LMOVE', KEYS[1], KEYS[3], 'LEFT', 'RIGHT')
  if not item then item = redis.call('LMOVE', KEYS[2], KEYS[3], 'LEFT', 'RIGHT') end
  if not item then break end
  out[#out + 1] = item
end
redis.call('PEXPIRE', KEYS[3], ARGV[4])
out[1] = waiting - (#out - 1)
return out
`;

// A dead attempt's in-flight items back to the front of the synchronous list, in their order; the starting attempt
// owns and claims the host. -1: another live job owns it (and its in-flight items).
const RESTORE = `${OWN}
if not own(KEYS[4], ARGV[3], ARGV[2]) then return -1 end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
local moved = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') do moved = moved + 1 end
if moved > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
return moved
`;

// The host job gives its claim and ownership up only when nothing is pending: 1. Work pushed meanwhile (its pusher
// found the claim and added no job): 0, the job goes on. A job that lost the host to another leaves both to it: 1.
const RELEASE = `
local owner = redis.call('GET', KEYS[4])
if owner and owner ~= ARGV[1] then return 1 end
if redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[3], KEYS[4])
return 1
`;

// A host job ending early (shutdown, failure) drops its claim and ownership, unless another job owns the host now.
const UNCLAIM = `
local owner = redis.call('GET', KEYS[2])
if owner and owner ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`;

// The running owner keeps its name (a probe may outlast the TTL without a take); 0: another job owns the host.
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

// Items nobody waits for any more (their list was cancelled) off both pending lists, so that they are never probed;
// what a drainer has already taken finishes. Every copy goes (an item pushed again after a suspected loss of Redis's
// data may be pending twice). Returns how many were still pending.
const WITHDRAW = `
local n = 0
for i = 1, #ARGV do
  n = n + redis.call('LREM', KEYS[1], 0, ARGV[i]) + redis.call('LREM', KEYS[2], 0, ARGV[i])
end
return n
`;

// Answered items off the in-flight list.
const DONE = `
for i = 1, #ARGV do redis.call('LREM', KEYS[1], 1, ARGV[i]) end
return #ARGV
`;

/**
 * Where a push is announced (the host's name), so that a host job lingering for more work takes it at once instead
 * of polling. At most once, like all pub/sub: a lost announcement costs the linger; the job then finds the work when
 * it tries to give up its claim (RELEASE), and goes on.
 */
export const hostWakeChannel = (keyPrefix: string): string => `${keyPrefix}host-wake`;

export interface HostQueueOptions {
  redis: RedisClient;
  keyPrefix: string;
  /** How long a host's lists outlive their last write: longer than any item may wait (its answerBy). */
  keyTtlMs: number;
  /**
   * Redis Cluster: a host's lists and its claim (one script uses them together) in a slot of their own, the host's name
   * as hash tag, so that hosts spread over the shards instead of all sitting in `keyPrefix`'s slot.
   */
  hostSlots?: boolean;
  /**
   * How long a host job's claim and ownership outlive its last take or renewal (and a requester's claim its push):
   * the failover time.
   */
  claimTtlMs: number;
}

export interface TakenItem {
  item: HostWorkItem;
  /** The item as stored, to remove it from the in-flight list. */
  raw: string;
}

export interface HostPush {
  host: string;
  lane: HostLane;
  items: readonly HostWorkItem[];
}

type ScriptArg = string | number;
type HostScript<T> = (...args: ScriptArg[]) => Promise<T>;

/** The scripts as commands of the connection (ioredis defineCommand): EVALSHA, the script text only once per socket. */
interface HostScripts {
  agoraHostWorkPush: HostScript<number>;
  agoraHostWorkTake: HostScript<[number, ...string[]]>;
  agoraHostWorkRestore: HostScript<number>;
  agoraHostWorkRelease: HostScript<number>;
  agoraHostWorkUnclaim: HostScript<number>;
  agoraHostWorkRenew: HostScript<number>;
  agoraHostWorkDone: HostScript<number>;
  agoraHostWorkWithdraw: HostScript<number>;
}

const SCRIPTS: Record<keyof HostScripts, { lua: string; numberOfKeys: number }> = {
  agoraHostWorkPush: { lua: PUSH, numberOfKeys: 2 },
  agoraHostWorkTake: { lua: TAKE, numberOfKeys: 5 },
  agoraHostWorkRestore: { lua: RESTORE, numberOfKeys: 4 },
  agoraHostWorkRelease: { lua: RELEASE, numberOfKeys: 4 },
  agoraHostWorkUnclaim: { lua: UNCLAIM, numberOfKeys: 2 },
  agoraHostWorkRenew: { lua: RENEW, numberOfKeys: 1 },
  agoraHostWorkDone: { lua: DONE, numberOfKeys: 1 },
  agoraHostWorkWithdraw: { lua: WITHDRAW, numberOfKeys: 2 },
};

function defineHostScripts(redis: RedisClient): HostScripts {
  for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
  return redis as unknown as HostScripts;
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
    claimed: `${hostKey(host)}:claimed`,
    owner: `${hostKey(host)}:owner`,
  });
  const scripts = defineHostScripts(redis);

  /**
   * Adds requesters' items to their hosts' pending work (one script per host and lane; on an auto-pipelined
   * connection they leave with every other command of the same turn of the event loop). For each push, true when it
   * found no host job claiming the host: the caller must add the host's job.
   */
  async function pushAll(pushes: readonly HostPush[]): Promise<boolean[]> {
    const claimed = await Promise.all(
      pushes.map(({ host, lane, items }) => {
        const k = keys(host);
        return scripts.agoraHostWorkPush(
          k[lane],
          k.claimed,
          opts.keyTtlMs,
          opts.claimTtlMs,
          wakeChannel,
          host,
          ...items.map((i) => JSON.stringify(i)),
        );
      }),
    );
    return claimed.map((claimedNow) => claimedNow === 1);
  }

  /**
   * Takes off the in-flight list the items `answered` (their replies sent), then a share of the pending work as
   * `take` does, in one script; `waiting`: the items still pending after it (0 for a job that no longer owns the host).
   */
  async function next(
    host: string,
    job: string,
    limits: TakeLimits,
    answered: readonly TakenItem[],
  ): Promise<{ taken: TakenItem[]; waiting: number }> {
    const k = keys(host);
    const [waiting, ...raws] = await scripts.agoraHostWorkTake(
      k.sync,
      k.list,
      k.inFlight,
      k.claimed,
      k.owner,
      limits.maxBatch,
      limits.minBatch,
      Math.max(1, limits.lanes),
      opts.keyTtlMs,
      opts.claimTtlMs,
      job,
      ...answered.map((t) => t.raw),
    );
    return { taken: raws.map((raw) => ({ raw, item: JSON.parse(raw) as HostWorkItem })), waiting };
  }

  return {
    pushAll,

    /** Adds a requester's items to the host's pending work; true when the caller must add the host's job. */
    async push(host: string, lane: HostLane, items: readonly HostWorkItem[]): Promise<boolean> {
      if (items.length === 0) return false;
      return (await pushAll([{ host, lane, items }]))[0]!;
    },

    /**
     * Makes the starting job `job` the host's owner and puts a dead attempt's in-flight items back in front: how
     * many. Null: another live job owns the host; the starting one must leave it alone.
     */
    async restore(host: string, job: string): Promise<number | null> {
      const k = keys(host);
      const moved = await scripts.agoraHostWorkRestore(
        k.inFlight,
        k.sync,
        k.claimed,
        k.owner,
        opts.keyTtlMs,
        opts.claimTtlMs,
        job,
      );
      return moved < 0 ? null : moved;
    },

    /** Keeps `job` the host's owner for another claimTtlMs; false: another job owns it now. */
    async renew(host: string, job: string): Promise<boolean> {
      return (await scripts.agoraHostWorkRenew(keys(host).owner, job, opts.claimTtlMs)) === 1;
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

    /** A share of the pending work, moved to in flight; none for a job that no longer owns the host. */
    async take(host: string, job: string, limits: TakeLimits): Promise<TakenItem[]> {
      return (await next(host, job, limits, [])).taken;
    },

    next,

    /**
     * Gives `job`'s claim and ownership up if nothing is pending (true); false: work arrived, the job must go on.
     * True as well for a job that lost the host to another: it has nothing left to do.
     */
    async release(host: string, job: string): Promise<boolean> {
      const k = keys(host);
      return (await scripts.agoraHostWorkRelease(k.sync, k.list, k.claimed, k.owner, job)) === 1;
    },

    /** Drops `job`'s claim and ownership whatever is pending (a job ending early): the next push adds a job. */
    async unclaim(host: string, job: string): Promise<void> {
      const k = keys(host);
      await scripts.agoraHostWorkUnclaim(k.claimed, k.owner, job);
    },

    /** Pending items taken back by their requester before any drainer took them: how many were still pending. */
    async withdraw(host: string, items: readonly HostWorkItem[]): Promise<number> {
      if (items.length === 0) return 0;
      const k = keys(host);
      return scripts.agoraHostWorkWithdraw(k.sync, k.list, ...items.map((i) => JSON.stringify(i)));
    },

    /** Items answered (or dropped): off the in-flight list. */
    async done(host: string, taken: readonly TakenItem[]): Promise<void> {
      if (taken.length === 0) return;
      await scripts.agoraHostWorkDone(keys(host).inFlight, ...taken.map((t) => t.raw));
    },
  };
}

export type HostQueue = ReturnType<typeof createHostQueue>;
