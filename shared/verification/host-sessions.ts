import { SmtpError, SmtpSession } from './smtp-client.js';
import { classifyReply, type SmtpReply } from './smtp-reply.js';
import type { ProbeOutcome } from './smtp-probe.js';

/**
 * The SMTP sessions of one host job (host-drainer.ts): greeted connections kept open between the job's probes, so
 * that the next batch of the host goes straight to its RCPTs in the transaction already open (we never send DATA).
 * At most `maxPerHost` connections per MX host and `pacingMs` between two opens to one host. No other process
 * can hold connections to the job's host meanwhile (one host job per host runs cluster-wide), so these local
 * counts are the per-MX cap. A session is retired (QUIT) when it has carried `maxRcptPerSession` RCPTs, when it is
 * older than `maxAgeMs`, when anything went wrong with it, and when the job closes the pool.
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
  openedAt: number;
}

export interface HostSessionsOptions {
  smtpPort: number;
  heloName: string;
  smtpTimeoutMs: number;
  maxRcptPerSession: number;
  /** Connections open at once to one MX host. */
  maxPerHost: number;
  /** Least time between two connection opens to one MX host, ms. */
  pacingMs: number;
  /** Oldest a session may be when it is handed out again, ms. */
  maxAgeMs: number;
}

export interface SessionPool {
  take(host: string, addresses: string[], signal: AbortSignal): Promise<PooledSession | HostFailure>;
  giveBack(session: PooledSession, reusable: boolean): Promise<void>;
  close(): Promise<void>;
}

export function createHostSessions(opts: HostSessionsOptions): SessionPool {
  const idle = new Map<string, Entry[]>();
  const open = new Map<string, number>(); // connections per host, idle or lent, or being opened
  const nextOpenAt = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  const shutdown = new AbortController();
  const retiring = new Set<Promise<void>>();
  // Sessions handed to probes and not given back yet: close() ends them.
  const lent = new Set<Entry>();
  let closed = false;

  const usable = (e: Entry): boolean =>
    e.session.alive && !e.session.spoke && Date.now() - e.openedAt < opts.maxAgeMs && e.rcptsLeft > 0;

  /** A slot of the host is free again: one waiter may look again. */
  function freed(host: string): void {
    const n = (open.get(host) ?? 1) - 1;
    if (n > 0) open.set(host, n);
    else open.delete(host);
    waiting.get(host)?.shift()?.();
  }

  function retire(entry: Entry): void {
    const done = entry.session
      .quit()
      .catch(() => {})
      .finally(() => {
        retiring.delete(done);
        freed(entry.host);
      });
    retiring.add(done);
  }

  function takeIdle(host: string): Entry | null {
    const entries = idle.get(host) ?? [];
    while (entries.length > 0) {
      const entry = entries.pop()!;
      if (usable(entry)) return entry;
      retire(entry);
    }
    idle.delete(host);
    return null;
  }

  async function take(
    host: string,
    addresses: string[],
    signal: AbortSignal,
  ): Promise<PooledSession | HostFailure> {
    for (;;) {
      if (closed) return { kind: 'timeout', reply: null, detail: 'verifier shutting down' };
      if (signal.aborted)
        return { kind: 'timeout', reply: null, detail: `no connection to ${host} before the probe deadline` };
      const pooled = takeIdle(host);
      if (pooled) {
        pooled.reused = true;
        // The probe's deadline only: close() ends the sessions lent out itself (no combined signal per take).
        pooled.session.bindSignal(signal);
        lent.add(pooled);
        return pooled;
      }
      if ((open.get(host) ?? 0) < opts.maxPerHost) break;
      // Every connection to the host is lent out: wait for one to come back or close.
      await new Promise<void>((resolve) => {
        const list = waiting.get(host) ?? [];
        const wake = (): void => {
          signal.removeEventListener('abort', wake);
          const at = list.indexOf(wake);
          if (at >= 0) list.splice(at, 1);
          resolve();
        };
        list.push(wake);
        waiting.set(host, list);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    open.set(host, (open.get(host) ?? 0) + 1);
    const gap = (nextOpenAt.get(host) ?? 0) - Date.now();
    nextOpenAt.set(host, Math.max(Date.now(), nextOpenAt.get(host) ?? 0) + opts.pacingMs);
    if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
    const opened = await connect(host, addresses, AbortSignal.any([signal, shutdown.signal]));
    if ('kind' in opened) freed(host);
    else {
      opened.session.bindSignal(signal);
      if (closed) opened.session.abort();
      lent.add(opened);
    }
    return opened;
  }

  async function giveBack(lease: PooledSession, reusable: boolean): Promise<void> {
    const entry = lease as Entry;
    lent.delete(entry);
    entry.session.bindSignal(undefined);
    if (!reusable || closed || !usable(entry)) return retire(entry);
    entry.reused = false;
    idle.set(entry.host, [...(idle.get(entry.host) ?? []), entry]);
    waiting.get(entry.host)?.shift()?.();
  }

  /** Ends the probes still holding sessions and says goodbye (QUIT) on every connection. */
  async function close(): Promise<void> {
    closed = true;
    shutdown.abort();
    for (const entry of lent) entry.session.abort();
    for (const list of waiting.values()) for (const wake of [...list]) wake();
    for (const entries of idle.values()) for (const entry of entries) retire(entry);
    idle.clear();
    await Promise.all([...retiring]);
  }

  /** Connects to the first reachable address of a host, greets, EHLOs and upgrades to TLS. */
  async function connect(
    host: string,
    addresses: string[],
    signal: AbortSignal,
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
        if (hello.code === 250 && session.extensions.has('STARTTLS')) {
          const secured = await session.startTls();
          // A refused STARTTLS (454 "TLS not available") leaves the plain session as it was, and a probe needs no
          // TLS (RFC 3207 §4: the client decides whether to go on): only the EHLO over TLS counts once it began.
          if (session.secure) hello = secured;
        }
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
          openedAt: Date.now(),
        };
      } catch (err) {
        session?.close();
        failure = failureOf(err);
        if (signal.aborted) break;
      }
    }
    return failure;
  }

  return { take, giveBack, close };
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
