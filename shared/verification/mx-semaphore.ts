import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Subscriptions } from './subscriptions.js';

/**
 * Limits concurrent SMTP connections per MX host across every worker process, and paces new
 * connections to one host. Mail servers rate-limit and blocklist impatient clients; one busy
 * batch must not get the prober's IP banned for everyone.
 *
 * A sorted set per host holds one member per open connection, scored by its last renewal (Redis
 * clock, so workers' clocks may disagree). A holder renews its slots every `renewMs` while it lives,
 * so a member not renewed within the lease belongs to a dead process and is swept on the next acquire:
 * a SIGKILLed worker's slots are free again within one lease, however long its sessions would have lasted.
 *
 * A waiter retries when a release is announced on a pub/sub channel (the verifier's subscriber
 * connection, see subscriptions.ts), so a freed slot is taken within a round trip instead of at the
 * next poll; polling with backoff stays as the fallback for slots that expire and messages lost while
 * the subscriber reconnects. A waiter also announces that it wants the host, so that a process keeping
 * an idle connection to it for later (the session pool) gives the slot up now.
 */

const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

// Refreshes the score of each (key, token) pair still present; a slot already swept stays released.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  if redis.call('ZSCORE', key, ARGV[i + 1]) then
    redis.call('ZADD', key, 'XX', now, ARGV[i + 1])
    redis.call('PEXPIRE', key, ARGV[1])
  end
end
return 0`;

export interface MxSemaphoreOptions {
  redis: Redis;
  keyPrefix: string;
  /** Connections allowed at once per MX host. */
  limit: number;
  /** A slot not renewed for this long counts as abandoned by a dead holder, ms. */
  leaseMs: number;
  /** How often a holder renews its slots (well below `leaseMs`), ms. */
  renewMs: number;
  /** Minimum gap between two connection opens to one host, ms (0: none). */
  pacingMs: number;
  /** Where release and wanted announcements are heard (the verifier's one subscriber connection). */
  subscriptions: Subscriptions;
}

export class SemaphoreTimeoutError extends Error {
  constructor(host: string) {
    super(`no connection slot for ${host} before the probe deadline`);
    this.name = 'SemaphoreTimeoutError';
  }
}

// Waiting workers poll as a fallback; jitter keeps them from retrying in lockstep.
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 250;

export function createMxSemaphore(opts: MxSemaphoreOptions) {
  const slotKey = (host: string): string => `${opts.keyPrefix}mx-slots:${host}`;
  const paceKey = (host: string): string => `${opts.keyPrefix}mx-pace:${host}`;
  const releasedChannel = `${opts.keyPrefix}mx-released`;
  const wantedChannel = `${opts.keyPrefix}mx-wanted`;
  const waiters = new Map<string, Set<() => void>>();
  // Wanted announcements carry their sender: our own waiters are served by the session pool's hand-off, so only
  // another process's wait should cut short the sessions we keep for later.
  const me = randomUUID();
  const wantedListeners = new Set<(host: string) => void>();
  // The slots this process holds (token → host), renewed every renewMs while any is held.
  const held = new Map<string, string>();
  let renewal: NodeJS.Timeout | null = null;

  function renew(): void {
    if (held.size === 0) {
      if (renewal) clearInterval(renewal);
      renewal = null;
      return;
    }
    const slots = [...held];
    opts.redis
      .eval(
        RENEW,
        slots.length,
        ...slots.map(([, host]) => slotKey(host)),
        opts.leaseMs,
        ...slots.map(([t]) => t),
      )
      .catch(() => {}); // the next beat tries again; past the lease the slot is swept as a dead holder's
  }

  function hold(token: string, host: string): void {
    held.set(token, host);
    if (!renewal) {
      renewal = setInterval(renew, opts.renewMs);
      renewal.unref();
    }
  }

  // Subscribed when first needed (the session pool needs the wanted channel at once).
  let listening = false;
  function listen(): void {
    if (listening) return;
    listening = true;
    opts.subscriptions.subscribe(releasedChannel, wake);
    opts.subscriptions.subscribe(wantedChannel, (message) => {
      const [from, host] = message.split(' ', 2);
      if (from === me || !host) return;
      for (const listener of wantedListeners) listener(host);
    });
  }

  /** Calls `listener` with a host whenever another process waits for one of its slots. */
  function onWanted(listener: (host: string) => void): void {
    wantedListeners.add(listener);
    listen();
  }

  function wake(host: string): void {
    const waiting = waiters.get(host);
    if (!waiting) return;
    waiters.delete(host);
    for (const resume of waiting) resume();
  }

  /** Resolves on a release announced for `host`, after `ms`, or on abort, whichever comes first. */
  function released(host: string, ms: number, signal?: AbortSignal): Promise<void> {
    listen();
    return new Promise((resolve) => {
      const waiting = waiters.get(host) ?? new Set<() => void>();
      waiters.set(host, waiting);
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms + Math.floor(Math.random() * POLL_MIN_MS));
      signal?.addEventListener('abort', done, { once: true });
      waiting.add(done);
    });
  }

  /** Waits for a slot for `host`; resolves to the function that gives it back. */
  async function acquire(host: string, signal?: AbortSignal): Promise<() => Promise<void>> {
    const token = randomUUID();
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new SemaphoreTimeoutError(host);
      const got = await opts.redis.eval(ACQUIRE, 1, slotKey(host), opts.limit, opts.leaseMs, token);
      if (got === 1) break;
      opts.redis.publish(wantedChannel, `${me} ${host}`).catch(() => {});
      await released(host, Math.min(POLL_MAX_MS, POLL_MIN_MS * 2 ** attempt), signal);
    }
    hold(token, host);
    try {
      await pace(host, signal);
    } catch (err) {
      held.delete(token);
      await opts.redis.zrem(slotKey(host), token);
      throw err;
    }
    return async () => {
      held.delete(token);
      await opts.redis.pipeline().zrem(slotKey(host), token).publish(releasedChannel, host).exec();
    };
  }

  async function pace(host: string, signal?: AbortSignal): Promise<void> {
    if (opts.pacingMs <= 0) return;
    for (;;) {
      if (signal?.aborted) throw new SemaphoreTimeoutError(host);
      const set = await opts.redis.set(paceKey(host), '1', 'PX', opts.pacingMs, 'NX');
      if (set === 'OK') return;
      const left = await opts.redis.pttl(paceKey(host));
      await pause(Math.max(left, 1), signal);
    }
  }

  return { acquire, onWanted };
}

export type MxSemaphore = ReturnType<typeof createMxSemaphore>;

async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  const jitter = Math.floor(Math.random() * POLL_MIN_MS);
  try {
    await sleep(ms + jitter, undefined, { signal });
  } catch {
    // aborted: the loop's next check throws the semaphore timeout
  }
}
