import { SemaphoreTimeoutError, type MxSemaphore } from './mx-semaphore.js';
import { SmtpError, SmtpSession } from './smtp-client.js';
import { classifyReply, type SmtpReply } from './smtp-reply.js';
import type { ProbeOutcome } from './smtp-probe.js';

/**
 * Greeted SMTP sessions per MX host, kept open for a moment after a probe is done with them so that the next
 * probe of the same host (another job, another domain on that MX) skips the connect, greeting, EHLO, STARTTLS and
 * MAIL FROM, and goes straight to its RCPTs in the transaction already open (we never send DATA). A pooled session keeps its MX-semaphore slot while it waits, so the per-host cap
 * still counts every open connection. A session is retired (RSET, QUIT, slot released) when it has carried
 * `maxRcptPerSession` RCPTs in all, when it is older than `maxAgeMs`, after `lingerMs` unused, or when anything
 * went wrong with it. While a probe of another process waits for a slot of its host, the linger shrinks to
 * `wantedGraceMs`: long enough for this process's own next probe of the host (already queued behind the one that
 * just finished) to take the session, so a busy connection carries its full RCPT budget, but an idle connection
 * does not keep others from a host they could be probing. (This process's own waiters need no such signal: a
 * session given back goes straight to them.)
 */

export type HostFailure = Omit<ProbeOutcome, 'host'>;

export interface PooledSession {
  session: SmtpSession;
  host: string;
  /** RCPTs this connection may still carry. */
  rcptsLeft: number;
  /** Taken from the pool rather than opened for this probe: a failure may be the server's idle timeout. */
  reused: boolean;
  /** The open mail transaction (MAIL FROM accepted, with or without SMTPUTF8), which later probes continue. */
  transaction: 'ascii' | 'utf8' | null;
}

interface Entry extends PooledSession {
  /** When its semaphore slot was taken (the slot itself is renewed while the process lives). */
  openedAt: number;
  release: () => Promise<void>;
  idleTimer?: NodeJS.Timeout;
  /** When the parked entry is to be retired (only ever moved earlier while it stays parked). */
  retireAt?: number;
}

export interface SessionPoolOptions {
  semaphore: MxSemaphore;
  smtpPort: number;
  heloName: string;
  smtpTimeoutMs: number;
  maxRcptPerSession: number;
  /** How long an unused session stays open, ms. */
  lingerMs: number;
  /** How long it stays open while another probe waits for a slot of its host, ms. */
  wantedGraceMs: number;
  /** Oldest a session may be when it is handed out again, ms. */
  maxAgeMs: number;
}

export function createSessionPool(opts: SessionPoolOptions) {
  const idle = new Map<string, Entry[]>();
  const leased = new Set<Entry>();
  // Probes of this process waiting for a slot of a host: a session given back is handed straight to one of them
  // (a taker answers false when its probe has given up meanwhile).
  const waiting = new Map<string, Set<(entry: Entry) => boolean>>();
  // Aborted by close(): probes still holding sessions (a request's deadline may have orphaned them) end now.
  const shutdown = new AbortController();
  // Hosts some probe waited for lately: sessions to them are not parked until the wait is over.
  const wanted = new Map<string, number>();
  let closed = false;

  opts.semaphore.onWanted((host) => {
    wanted.set(host, Date.now());
    for (const entry of [...(idle.get(host) ?? [])]) park(entry, opts.wantedGraceMs);
  });
  const isWanted = (host: string): boolean => {
    const at = wanted.get(host);
    if (at === undefined) return false;
    if (Date.now() - at < opts.lingerMs) return true;
    wanted.delete(host);
    return false;
  };

  /** Takes an entry off the idle list, if it is there. */
  function unpark(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    entry.retireAt = undefined;
    const entries = idle.get(entry.host);
    const at = entries?.indexOf(entry) ?? -1;
    if (at >= 0) entries!.splice(at, 1);
    if (entries?.length === 0) idle.delete(entry.host);
  }

  /**
   * Hands an entry to a probe of this process waiting for its host, or parks it on the idle list, to be retired
   * after `ms` unless taken before. Parking a parked entry again only ever brings its retirement closer, so a
   * stream of "wanted" announcements cannot keep it open.
   */
  function park(entry: Entry, ms: number): void {
    // Parked already, to retire no later: its timer is left alone, so that a burst of announcements (a backlog
    // read at once from a loaded Redis connection) cannot keep re-arming it.
    if (entry.retireAt !== undefined && entry.retireAt <= Date.now() + ms) return;
    const retireAt = Math.min(entry.retireAt ?? Infinity, Date.now() + ms);
    unpark(entry);
    const takers = waiting.get(entry.host);
    for (const taker of takers ?? []) {
      takers!.delete(taker);
      if (taker(entry)) return;
    }
    entry.retireAt = retireAt;
    entry.idleTimer = setTimeout(
      () => {
        unpark(entry);
        void retire(entry);
      },
      Math.max(0, retireAt - Date.now()),
    );
    entry.idleTimer.unref();
    idle.set(entry.host, [...(idle.get(entry.host) ?? []), entry]);
  }

  const usable = (entry: Entry): boolean =>
    entry.session.alive && !entry.session.spoke && Date.now() - entry.openedAt < opts.maxAgeMs;

  async function retire(entry: Entry): Promise<void> {
    clearTimeout(entry.idleTimer);
    await entry.session.quit();
    // A slot that cannot be given back now (Redis unreachable) expires with its lease.
    await entry.release().catch(() => {});
    settled();
  }

  function takeIdle(host: string): Entry | null {
    const entries = idle.get(host);
    while (entries && entries.length > 0) {
      const entry = entries.pop()!;
      clearTimeout(entry.idleTimer);
      entry.retireAt = undefined;
      if (entries.length === 0) idle.delete(host);
      if (usable(entry)) return entry;
      void retire(entry);
    }
    return null;
  }

  function lend(entry: Entry, signal: AbortSignal): Entry {
    entry.session.bindSignal(AbortSignal.any([signal, shutdown.signal]));
    entry.reused = true;
    leased.add(entry);
    return entry;
  }

  /**
   * A greeted session to `host`, or why none could be had: a parked one, else a new connection once the semaphore
   * gives a slot, unless another probe of this process gives a session of the host back first.
   */
  async function take(
    host: string,
    addresses: string[],
    signal: AbortSignal,
  ): Promise<PooledSession | HostFailure> {
    if (closed) return { kind: 'timeout', reply: null, detail: 'verifier shutting down' };
    const pooled = takeIdle(host);
    if (pooled) return lend(pooled, signal);

    let handed: Entry | null = null;
    const handoff = new AbortController();
    const stop = (): void => handoff.abort();
    const taker = (entry: Entry): boolean => {
      if (handoff.signal.aborted) return false;
      handed = entry;
      stop();
      return true;
    };
    const takers = waiting.get(host) ?? new Set();
    waiting.set(host, takers.add(taker));
    signal.addEventListener('abort', stop, { once: true });
    let release: (() => Promise<void>) | null = null;
    let failure: unknown = null;
    let acquiredAt = 0;
    try {
      release = await opts.semaphore.acquire(host, handoff.signal);
      acquiredAt = Date.now();
    } catch (err) {
      if (!(err instanceof SemaphoreTimeoutError)) failure = err;
    } finally {
      takers.delete(taker);
      if (takers.size === 0 && waiting.get(host) === takers) waiting.delete(host);
      signal.removeEventListener('abort', stop);
    }
    // A session handed over is ours whatever happened to the slot request: dropping it would leak its slot.
    if (handed) {
      await release?.().catch(() => {});
      return lend(handed, signal);
    }
    if (failure) throw failure;
    if (!release)
      return {
        kind: 'timeout',
        reply: null,
        detail: `no connection slot for ${host} before the probe deadline`,
      };
    const opened = await open(
      host,
      addresses,
      AbortSignal.any([signal, shutdown.signal]),
      release,
      acquiredAt,
    );
    if ('kind' in opened) return opened;
    leased.add(opened);
    return opened;
  }

  /**
   * Back from a probe. `reusable` says the probe's RCPTs went normally; the session is then parked, or retired
   * when it has nothing left to give.
   */
  async function giveBack(session: PooledSession, reusable: boolean): Promise<void> {
    const entry = session as Entry;
    if (!leased.delete(entry)) return;
    entry.session.bindSignal(undefined);
    if (!reusable || closed || entry.rcptsLeft <= 0 || !usable(entry)) return retire(entry);
    entry.reused = false;
    park(entry, isWanted(entry.host) ? opts.wantedGraceMs : opts.lingerMs);
    settled();
  }

  // close() waits for the sessions still lent out; each return or retirement may be the last one.
  let drained: (() => void) | null = null;
  function settled(): void {
    if (drained && leased.size === 0) drained();
  }

  /**
   * Shutdown: ends the probes still holding sessions (aborting their SMTP steps), waits for them to give the
   * sessions back, and says goodbye (QUIT) on every connection, releasing its slot.
   */
  async function close(): Promise<void> {
    closed = true;
    shutdown.abort();
    if (leased.size > 0) await new Promise<void>((resolve) => (drained = resolve));
    const entries = [...idle.values()].flat();
    idle.clear();
    await Promise.all(entries.map(retire));
  }

  /** With a slot: connects to the first reachable address of a host, greets, EHLOs and upgrades to TLS. */
  async function open(
    host: string,
    addresses: string[],
    signal: AbortSignal,
    release: () => Promise<void>,
    acquiredAt: number,
  ): Promise<Entry | HostFailure> {
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
          transaction: null,
          rcptsLeft: opts.maxRcptPerSession,
          reused: false,
          openedAt: acquiredAt,
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
