import { randomBytes } from 'node:crypto';
import type { MailHost } from './dns.js';
import { allowedAddresses } from './host-guard.js';
import { failureOf, type HostFailure, type PooledSession, type SessionPool } from './host-sessions.js';
import { SmtpError, type SmtpSession } from './smtp-client.js';
import { classifyReply, isTooManyRecipients, type ReplyClass, type SmtpReply } from './smtp-reply.js';
import type { VerifierLogger } from './types.js';

/**
 * Probes the mailboxes of one domain: MX hosts by preference, many RCPTs per session (at most
 * `maxRcptPerSession`, then a new session), one random-local-part RCPT for catch-all detection,
 * never DATA. Fallback to the next MX on connect failure, a non-220 greeting, a 4xx to MAIL FROM
 * or a 421. A session that breaks mid-way is reopened; an address that breaks two sessions is
 * given up (docs/verification.md, "Probe sequence"). Sessions come from the process's session pool,
 * so a probe may continue a connection another probe of the same MX host opened.
 */

export type ProbeOutcomeKind =
  ReplyClass | 'timeout' | 'connection_failed' | 'private_mx' | 'smtputf8_unsupported';

export interface ProbeOutcome {
  kind: ProbeOutcomeKind;
  /** The reply that decided it, when a server answered. */
  reply: SmtpReply | null;
  /** MX host name that answered ('' when none was reached and no host was tried). */
  host: string;
  /** Why, when no reply decided (timeouts, refused connections). */
  detail: string | null;
}

export interface ProbeTarget {
  /** Address as sent in RCPT TO (ASCII domain). */
  address: string;
  smtputf8: boolean;
}

export interface ProbeOptions {
  mailFrom: string;
  probeTimeoutMs: number;
  maxRcptPerSession: number;
  allowPrivateMx: boolean;
  pool: SessionPool;
  logger?: VerifierLogger;
}

export interface ProbeReport {
  outcomes: Map<string, ProbeOutcome>;
  /** Outcome of the random-address RCPT; null when none was asked for. */
  catchAllProbe: ProbeOutcome | null;
  /** Outcome of the random-address RCPT each fallback MX (not the first) was asked before its first batch. */
  fallbackProbes: Map<string, ProbeOutcome>;
  /** SMTP sessions opened (greeted), for tests and metrics. */
  sessions: number;
}

interface Pending extends ProbeTarget {
  failures: number;
}

/** How a session's recipients went: only 'done' leaves it fit for another transaction. */
type RecipientsEnd = 'done' | 'go_away' | 'too_many' | 'broken';

export async function probeDomain(
  hosts: readonly MailHost[],
  targets: readonly ProbeTarget[],
  catchAllAddress: string | null,
  opts: ProbeOptions,
): Promise<ProbeReport> {
  const signal = AbortSignal.timeout(opts.probeTimeoutMs);
  const outcomes = new Map<string, ProbeOutcome>();
  // The catch-all probe goes first: its answer qualifies every "accepted" that follows.
  const pending: Pending[] = [
    ...(catchAllAddress ? [{ address: catchAllAddress, smtputf8: false }] : []),
    ...targets,
  ].map((t) => ({ ...t, failures: 0 }));
  const candidates = hosts.map((h) => ({
    host: h.host,
    addresses: allowedAddresses(h.addresses, opts.allowPrivateMx),
    known: h.addresses.length,
  }));
  // Bounded so that a server that keeps breaking sessions cannot keep us looping.
  const maxSessions = Math.ceil(pending.length / opts.maxRcptPerSession) + 2 * candidates.length + 4;

  // Fallback MX host → the random address it is asked.
  const fallbackProbes = new Map<string, string>();
  let hostIndex = 0;
  let sessions = 0;
  let lastHost = candidates[0]?.host ?? '';
  let lastFailure: HostFailure = { kind: 'connection_failed', reply: null, detail: 'no mail host address' };
  const finish = (item: Pending, outcome: ProbeOutcome): void => void outcomes.set(item.address, outcome);

  while (pending.length > 0 && hostIndex < candidates.length && sessions < maxSessions && !signal.aborted) {
    const target = candidates[hostIndex]!;
    lastHost = target.host;
    if (target.addresses.length === 0) {
      // Every address of this MX is private/reserved (or it has none): never connect.
      const refused = target.known > 0;
      lastFailure = {
        kind: refused ? 'private_mx' : 'connection_failed',
        reply: null,
        detail: refused ? 'MX resolves to a non-public address' : 'MX has no address',
      };
      hostIndex++;
      continue;
    }
    const lease = await opts.pool.take(target.host, target.addresses, signal);
    if ('kind' in lease) {
      lastFailure = lease;
      hostIndex++;
      continue;
    }
    if (!lease.reused) sessions++;
    const { session } = lease;
    // A backup MX often accepts every address and queues it for the primary: the domain's catch-all verdict (the
    // first MX's) says nothing about it, so it gets its own random address first.
    if (target.host !== candidates[0]!.host && !fallbackProbes.has(target.host)) {
      const address = randomAddress(domainOf(pending[0]!.address));
      fallbackProbes.set(target.host, address);
      pending.unshift({ address, smtputf8: false, failures: 0 });
    }
    const batch = pending.splice(0, Math.min(opts.maxRcptPerSession, lease.rcptsLeft));
    lease.rcptsLeft -= batch.length;
    let moveOn = false;
    let reusable = false;
    try {
      const mail = await beginTransaction(lease, batch, opts.mailFrom);
      if (mail && (mail.code < 200 || mail.code >= 300)) {
        const kind = classifyReply(mail);
        if (mail.code < 500) {
          // 4xx to MAIL FROM: this host will not talk now; another MX might.
          pending.unshift(...batch);
          lastFailure = { kind, reply: mail, detail: 'MAIL FROM deferred' };
          moveOn = true;
        } else {
          // A permanent refusal of our sender is a refusal of us, for every address.
          for (const item of [...batch, ...pending.splice(0)])
            finish(item, { kind: 'blocked', reply: mail, host: target.host, detail: 'MAIL FROM rejected' });
        }
      } else {
        const { end, reply } = await runRecipients(
          session,
          batch,
          pending,
          target.host,
          finish,
          lease.reused,
        );
        reusable = end === 'done';
        // Should the session budget run out on such a server, what is left says why.
        if (end === 'too_many')
          lastFailure = {
            kind: 'temporary_failure',
            reply: reply ?? null,
            detail: 'recipient limit per transaction',
          };
        if (end === 'go_away') {
          // A 421 on a reused connection's first RCPT is most likely its idle timeout: not the host refusing us.
          const stale = lease.reused && batch.every((b) => !outcomes.has(b.address));
          if (!stale) {
            lastFailure = {
              kind: classifyReply(reply!),
              reply: reply ?? null,
              detail: 'server closing the connection',
            };
            moveOn = true;
          }
        }
      }
    } catch (err) {
      pending.unshift(...batch.filter((b) => !outcomes.has(b.address)));
      const failure = failureOf(err);
      // A pooled session may have been closed by the server while it waited: that says nothing about the host.
      if (!lease.reused) {
        // MAIL FROM broke a fresh session: this host is failing, try the next one.
        lastFailure = failure;
        moveOn = true;
      }
    } finally {
      await opts.pool.giveBack(lease, reusable);
    }
    if (moveOn) hostIndex++;
  }

  const leftover: HostFailure = signal.aborted
    ? { kind: 'timeout', reply: null, detail: 'probe deadline reached' }
    : lastFailure;
  for (const item of pending) finish(item, { ...leftover, host: lastHost });

  const catchAllProbe = catchAllAddress ? (outcomes.get(catchAllAddress) ?? null) : null;
  if (catchAllAddress) outcomes.delete(catchAllAddress);
  const fallbackOutcomes = new Map<string, ProbeOutcome>();
  for (const [host, address] of fallbackProbes) {
    const outcome = outcomes.get(address);
    // Only the host's own answer qualifies its acceptances (a probe left over when it failed says nothing).
    if (outcome?.host === host) fallbackOutcomes.set(host, outcome);
    outcomes.delete(address);
  }
  opts.logger?.debug(
    { hosts: hosts.map((h) => h.host), targets: targets.length, sessions },
    'smtp probe done',
  );
  return { outcomes, catchAllProbe, fallbackProbes: fallbackOutcomes, sessions };
}

/**
 * MAIL FROM, unless the (pooled) session is already in a transaction that can take these recipients: a
 * transaction is never given DATA, so it may go on collecting RCPTs across probes, up to the connection's RCPT
 * budget. A UTF-8 mailbox needs a transaction opened with SMTPUTF8 (RFC 6531): then the old one is reset first.
 * Returns the MAIL FROM reply, or null when the open transaction goes on.
 */
async function beginTransaction(
  lease: PooledSession,
  batch: Pending[],
  mailFrom: string,
): Promise<SmtpReply | null> {
  const { session } = lease;
  const utf8 = batch.some((b) => b.smtputf8) && session.extensions.has('SMTPUTF8');
  if (lease.transaction === 'utf8' || (lease.transaction === 'ascii' && !utf8)) return null;
  if (lease.transaction !== null) {
    const reset = await session.command('RSET');
    if (reset.code !== 250) throw new SmtpError('protocol', `RSET refused: ${reset.code}`);
    lease.transaction = null;
  }
  const mail = await session.command(`MAIL FROM:<${mailFrom}>${utf8 ? ' SMTPUTF8' : ''}`);
  if (mail.code >= 200 && mail.code < 300) lease.transaction = utf8 ? 'utf8' : 'ascii';
  return mail;
}

/**
 * RCPT for each address of the batch; says how the session ended up (go_away: the host sent 421, with that reply).
 * On a continued transaction (`continued`), a 503 "need MAIL" means the server dropped the transaction: the batch
 * goes back to a fresh session instead of being graded on that reply.
 */
async function runRecipients(
  session: SmtpSession,
  batch: Pending[],
  pending: Pending[],
  host: string,
  finish: (item: Pending, outcome: ProbeOutcome) => void,
  continued: boolean,
): Promise<{ end: RecipientsEnd; reply?: SmtpReply }> {
  let answered = 0;
  for (let i = 0; i < batch.length; i++) {
    const item = batch[i]!;
    if (item.smtputf8 && !session.extensions.has('SMTPUTF8')) {
      // RFC 6531 §3.4: a UTF-8 mailbox cannot be given to a server without SMTPUTF8.
      finish(item, {
        kind: 'smtputf8_unsupported',
        reply: null,
        host,
        detail: 'server does not offer SMTPUTF8',
      });
      continue;
    }
    let reply: SmtpReply;
    try {
      reply = await session.command(`RCPT TO:<${item.address}>`);
    } catch (err) {
      const rest = batch.slice(i + 1);
      // A server that hangs up after answering an earlier RCPT (some do after each refusal) never judged this
      // address: it goes first into the next session, where breaking it would count.
      const bystander = err instanceof SmtpError && err.kind === 'closed' && answered > 0;
      if ((err instanceof SmtpError && err.kind === 'aborted') || bystander) {
        pending.unshift(item, ...rest);
        return { end: 'broken' };
      }
      item.failures++;
      if (item.failures >= 2) finish(item, { ...failureOf(err), host });
      pending.unshift(...rest, ...(item.failures >= 2 ? [] : [item]));
      return { end: 'broken' };
    }
    answered++;
    if (reply.code === 421) {
      pending.unshift(item, ...batch.slice(i + 1));
      return { end: 'go_away', reply };
    }
    if (continued && reply.code === 503) {
      pending.unshift(item, ...batch.slice(i + 1));
      return { end: 'broken' };
    }
    if (isTooManyRecipients(reply)) {
      // The server's per-transaction limit is below ours: the rest go to a fresh session.
      pending.unshift(item, ...batch.slice(i + 1));
      return { end: 'too_many', reply };
    }
    finish(item, { kind: classifyReply(reply), reply, host, detail: null });
  }
  return { end: 'done' };
}

/** A local part no person has: if the server accepts it, it accepts anything. */
export function randomAddress(domain: string): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const local = [...randomBytes(18)].map((b) => letters[b % letters.length]).join('');
  return `${local}@${domain}`;
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}
