import type { Config } from '../config.js';

/**
 * Every timer of the verification dispatch, derived here and nowhere else, from three settings:
 *
 * - `failoverMs` (VERIFY_FAILOVER_MS, 5 s): how long the work of a process that died without a word (SIGKILL,
 *   OOM, lost host) may stay with it. Its verify jobs' locks, its host ownerships and its SMTP connection slots
 *   all lapse within about this long, and the survivors take them over.
 * - `smtpTimeoutMs` (VERIFY_SMTP_TIMEOUT_MS) and `probeTimeoutMs` (VERIFY_PROBE_TIMEOUT_MS): how long the network
 *   may take, which bounds how long a live process may keep work before anyone gives up on it.
 *
 * A live process keeps everything it holds by renewing it (BullMQ renews job locks at half their duration; the
 * heartbeat renews the process's liveness and its SMTP slots), so none of the short times below limits how long a
 * probe may take: they only bound how long a dead process's leftovers stay in the way.
 *
 * Worst case after a SIGKILL, at the defaults: a job lock lapses within `jobLockMs` (5 s) of the last renewal,
 * and the next stalled check (every `stalledIntervalMs`, 2.5 s) of any live worker moves the job back to wait:
 * 7.5 s. Meanwhile the dead process's heartbeat has lapsed (`aliveMs`, 3 s) and its host ownerships and slots
 * with it, so the job's new worker probes the dead process's hosts itself at once.
 */
export interface DispatchTimers {
  /** BullMQ lock of a verify job: a dead worker's job is free again this long after its last renewal. */
  jobLockMs: number;
  /** How often every verify worker looks for jobs whose lock lapsed (BullMQ stalled-job check). */
  stalledIntervalMs: number;
  /** A process's liveness beat, which also renews its SMTP slots and drains its inbox of forwarded work. */
  heartbeatMs: number;
  /** A process missing its beats this long counts as dead: its forwarded work and its host ownerships are taken. */
  aliveMs: number;
  /** An SMTP connection slot not renewed for this long belonged to a dead process and is swept. */
  slotLeaseMs: number;
  /** How long a host stays with a live process that stopped probing it (ownership claims, renewed while probing). */
  ownershipMs: number;
  /** Longest wait for the evidence of work forwarded to a live owner before probing it here. */
  replyTimeoutMs: number;
  /** How long a finished SMTP session stays open for the next probe of its MX host. */
  sessionLingerMs: number;
  /** Oldest a pooled SMTP session may be when it is handed out again. */
  maxSessionAgeMs: number;
  /** Time kept before a request's deadline for a job's answer to travel back (worker → Redis → request). */
  answerMarginMs: number;
}

export interface DispatchSettings {
  failoverMs: number;
  smtpTimeoutMs: number;
  probeTimeoutMs: number;
}

/** VERIFY_FAILOVER_MS's default, for engines built from hand-made options (tests, benches). */
export const DEFAULT_FAILOVER_MS = 5000;

// How long a finished session stays open for the next probe of its MX host: a bulk load reuses it, a lone address
// costs the host one idle connection for half a second.
const SESSION_LINGER_MS = 500;
// Beats per failover period: a process is declared dead after missing three of them in a row (a GC pause or a
// slow Redis round trip misses one, not three), and the two left absorb the detection delay.
const BEATS_PER_FAILOVER = 5;
const BEATS_TO_DEATH = 3;

export function dispatchTimers(settings: DispatchSettings): DispatchTimers {
  const { failoverMs, smtpTimeoutMs, probeTimeoutMs } = settings;
  const heartbeatMs = Math.max(100, Math.round(failoverMs / BEATS_PER_FAILOVER));
  const aliveMs = BEATS_TO_DEATH * heartbeatMs;
  return {
    jobLockMs: failoverMs,
    stalledIntervalMs: Math.max(500, Math.round(failoverMs / 2)),
    heartbeatMs,
    aliveMs,
    slotLeaseMs: aliveMs,
    // A live owner renews its claim whenever it probes the host; one SMTP step plus the linger covers the gap
    // between two probes of a busy host. A dead owner's claims are taken over as soon as it is found dead.
    ownershipMs: SESSION_LINGER_MS + smtpTimeoutMs,
    replyTimeoutMs: probeTimeoutMs,
    sessionLingerMs: SESSION_LINGER_MS,
    maxSessionAgeMs: probeTimeoutMs,
    answerMarginMs: 250,
  };
}

/** The dispatch timers of a deployment's configuration. */
export const dispatchTimersOf = (config: Pick<Config, 'verify'>): DispatchTimers =>
  dispatchTimers({
    failoverMs: config.verify.failoverMs,
    smtpTimeoutMs: config.verify.smtpTimeoutMs,
    probeTimeoutMs: config.verify.probeTimeoutMs,
  });
