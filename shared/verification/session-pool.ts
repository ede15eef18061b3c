import { SemaphoreTimeoutError, type MxSemaphore } from './mx-semaphore.js';
import { SmtpError, SmtpSession } from './smtp-client.js';
import { classifyReply, type SmtpReply } from './smtp-reply.js';
import type { ProbeOutcome } from './smtp-probe.js';

/**
 * Greeted SMTP sessions per MX host, kept open for a moment after a probe is done with them so that the next
 * probe of the same host (another job, another domain on that MX) skips the connect, greeting, EHLO and STARTTLS
 * and goes straight to MAIL FROM. A pooled session keeps its MX-semaphore slot while it waits, so the per-host cap
 * still counts every open connection. A session is retired (RSET, QUIT, slot released) when it has carried
 * `maxRcptPerSession` RCPTs in all, when it is older than `maxAgeMs`, after `lingerMs` unused, when anything
 * went wrong with it, or at once when a probe (of any process) is waiting for a slot of its host: an idle
 * connection must not keep others from a host they could be probing.
 */

export type HostFailure = Omit<ProbeOutcome, 'host'>;

export interface PooledSession {
  session: SmtpSession;
  host: string;
  /** RCPTs this connection may still carry. */
  rcptsLeft: number;
  /** Taken from the pool rather than opened for this probe: a failure may be the server's idle timeout. */
  reused: boolean;
}

interface Entry extends PooledSession {
  openedAt: number;
  release: () => Promise<void>;
  idleTimer?: NodeJS.Timeout;
}

export interface SessionPoolOptions {
  semaphore: MxSemaphore;
  smtpPort: number;
  heloName: string;
  smtpTimeoutMs: number;
  maxRcptPerSession: number;
  /** How long an unused session stays open, ms. */
  lingerMs: number;
  /** Oldest a session may be when it is handed out again (below the semaphore lease), ms. */
  maxAgeMs: number;
}

export function createSessionPool(opts: SessionPoolOptions) {
  const idle = new Map<string, Entry[]>();
  const leased = new Set<Entry>();
  // Hosts some probe waited for lately: sessions to them are not parked until the wait is over.
  const wanted = new Map<string, number>();
  let closed = false;

  opts.semaphore.onWanted((host) => {
    wanted.set(host, Date.now());
    const entries = idle.get(host);
    idle.delete(host);
    for (const entry of entries ?? []) void retire(entry);
  });
  const isWanted = (host: string): boolean => {
    const at = wanted.get(host);
    if (at === undefined) return false;
    if (Date.now() - at < opts.lingerMs) return true;
    wanted.delete(host);
    return false;
  };

  async function retire(entry: Entry): Promise<void> {
    clearTimeout(entry.idleTimer);
    await entry.session.quit();
    await entry.release();
  }

  function takeIdle(host: string, signal: AbortSignal): Entry | null {
    const entries = idle.get(host);
    while (entries && entries.length > 0) {
      const entry = entries.pop()!;
      clearTimeout(entry.idleTimer);
      if (entries.length === 0) idle.delete(host);
      if (entry.session.alive && Date.now() - entry.openedAt < opts.maxAgeMs) {
        entry.session.bindSignal(signal);
        return entry;
      }
      void retire(entry);
    }
    return null;
  }

  /** A greeted session to `host` (pooled or new), or why none could be had. */
  async function take(
    host: string,
    addresses: string[],
    signal: AbortSignal,
  ): Promise<PooledSession | HostFailure> {
    const pooled = takeIdle(host, signal);
    if (pooled) {
      pooled.reused = true;
      leased.add(pooled);
      return pooled;
    }
    const opened = await open(host, addresses, signal);
    if ('kind' in opened) return opened;
    leased.add(opened);
    return opened;
  }

  /**
   * Back from a probe. `reusable` says the session is between transactions as far as the probe knows (its last
   * transaction ended normally); it is then reset and parked, or retired when it has nothing left to give.
   */
  async function giveBack(session: PooledSession, reusable: boolean): Promise<void> {
    const entry = session as Entry;
    if (!leased.delete(entry)) return;
    entry.session.bindSignal(undefined);
    const keep =
      reusable &&
      !closed &&
      entry.rcptsLeft > 0 &&
      Date.now() - entry.openedAt < opts.maxAgeMs &&
      !isWanted(entry.host);
    if (!keep || (await reset(entry.session)) === false || closed || isWanted(entry.host))
      return retire(entry);
    entry.reused = false;
    entry.idleTimer = setTimeout(() => {
      const entries = idle.get(entry.host);
      const at = entries?.indexOf(entry) ?? -1;
      if (at >= 0) entries!.splice(at, 1);
      if (entries?.length === 0) idle.delete(entry.host);
      void retire(entry);
    }, opts.lingerMs);
    entry.idleTimer.unref();
    const entries = idle.get(entry.host) ?? [];
    entries.push(entry);
    idle.set(entry.host, entries);
  }

  /** Retires every parked session (shutdown); sessions still in use are retired when given back. */
  async function close(): Promise<void> {
    closed = true;
    const entries = [...idle.values()].flat();
    idle.clear();
    await Promise.all(entries.map(retire));
  }

  /** Connects to the first reachable address of a host, greets, EHLOs and upgrades to TLS. */
  async function open(host: string, addresses: string[], signal: AbortSignal): Promise<Entry | HostFailure> {
    let release: () => Promise<void>;
    try {
      release = await opts.semaphore.acquire(host, signal);
    } catch (err) {
      if (err instanceof SemaphoreTimeoutError) return { kind: 'timeout', reply: null, detail: err.message };
      throw err;
    }
    let failure: HostFailure = { kind: 'connection_failed', reply: null, detail: 'no address' };
    for (const address of addresses) {
      let session: SmtpSession | null = null;
      try {
        const connected = await SmtpSession.connect({
          address,
          port: opts.smtpPort,
          servername: host,
          heloName: opts.heloName,
          timeoutMs: opts.smtpTimeoutMs,
          signal,
        });
        session = connected.session;
        if (connected.greeting.code !== 220) {
          failure = replyFailure(connected.greeting, 'greeting refused');
          session.close();
          continue;
        }
        let hello = await session.hello();
        if (hello.code === 250 && session.extensions.has('STARTTLS')) hello = await session.startTls();
        if (hello.code !== 250) {
          failure = replyFailure(hello, 'EHLO/HELO refused');
          session.close();
          continue;
        }
        return {
          session,
          host,
          rcptsLeft: opts.maxRcptPerSession,
          reused: false,
          openedAt: Date.now(),
          release,
        };
      } catch (err) {
        session?.close();
        failure = failureOf(err);
        if (signal.aborted) break;
      }
    }
    await release();
    return failure;
  }

  return { take, giveBack, close };
}

export type SessionPool = ReturnType<typeof createSessionPool>;

/** RSET between transactions; false when the session did not take it. */
async function reset(session: SmtpSession): Promise<boolean> {
  try {
    return (await session.command('RSET')).code === 250;
  } catch {
    return false;
  }
}

export function replyFailure(reply: SmtpReply, detail: string): HostFailure {
  // A 5xx before MAIL FROM refuses the client, whatever the words say.
  const kind = reply.code >= 500 ? 'blocked' : classifyReply(reply);
  return { kind: kind === 'accepted' ? 'connection_failed' : kind, reply, detail };
}

export function failureOf(err: unknown): HostFailure {
  if (err instanceof SmtpError) {
    const kind = err.kind === 'timeout' || err.kind === 'aborted' ? 'timeout' : 'connection_failed';
    return { kind, reply: null, detail: err.message };
  }
  throw err;
}
