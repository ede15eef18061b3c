import type { Config } from '../config.js';

/**
 * Every timer of the verification dispatch, derived here and nowhere else, from three settings:
 *
 * - `failoverMs` (VERIFY_FAILOVER_MS, 5 s): how long the work of a process that died without a word (SIGKILL,
 *   OOM, lost host) may stay with it. Its verify jobs' and host jobs' locks lapse within about this long, and
 *   BullMQ's stalled-job check of a surviving worker hands them to another.
 * - `smtpTimeoutMs` (VERIFY_SMTP_TIMEOUT_MS) and `probeTimeoutMs` (VERIFY_PROBE_TIMEOUT_MS): how long the network
 *   may take, which bounds how long a live process may keep work before anyone gives up on it.
 *
 * A live process keeps its jobs by renewing their locks (BullMQ renews at half their duration), so none of the
 * short times below limits how long a probe may take: they only bound how long a dead process's jobs stay in the
 * way. Worst case after a SIGKILL, at the defaults: a lock lapses within `jobLockMs` (5 s) of the last renewal and
 * the next stalled check (every `stalledIntervalMs`, 2.5 s) moves the job back to wait: 7.5 s.
 */
export interface DispatchTimers {
  /** BullMQ lock of a verify job and of a host job: a dead worker's job is free again this long after its last renewal. */
  jobLockMs: number;
  /** How often every worker looks for jobs whose lock lapsed (BullMQ stalled-job check). */
  stalledIntervalMs: number;
  /** How often a requester still waiting adds its host job again (a no-op while one exists). */
  reAddMs: number;
  /** Longest a request without a deadline of its own (a list chunk) waits for a host's answers. */
  replyTimeoutMs: number;
  /** How long a host job with nothing left keeps its sessions open for work on its way. */
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

// How long a drained host's sessions stay open for more: a bulk load's next request reuses them, a lone address
// costs the host one idle connection for half a second.
const SESSION_LINGER_MS = 500;
// A list chunk's answers may wait behind the host's other work: a few probe deadlines.
const PROBES_PER_REPLY_WAIT = 4;

export function dispatchTimers(settings: DispatchSettings): DispatchTimers {
  const { failoverMs, probeTimeoutMs } = settings;
  return {
    jobLockMs: failoverMs,
    stalledIntervalMs: Math.max(500, Math.round(failoverMs / 2)),
    reAddMs: failoverMs,
    replyTimeoutMs: PROBES_PER_REPLY_WAIT * probeTimeoutMs,
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
