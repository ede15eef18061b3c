import type { RedisClient } from '../redis.js';

/** The four statuses of the public API (seed spec); precedence is decided in verdict.ts. */
export type VerificationStatus = 'valid' | 'invalid' | 'risky' | 'unknown';

/**
 * Why a verdict was reached. One reason per result: the factor that decided the status
 * (docs/verification.md lists them with their meaning).
 */
export type VerificationReason =
  | 'accepted'
  | 'bad_syntax'
  | 'nxdomain'
  | 'no_mx'
  | 'null_mx'
  | 'dns_error'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'mailbox_full'
  | 'catch_all'
  | 'disposable'
  | 'role_based'
  | 'greylisted'
  | 'temporary_failure'
  | 'blocked'
  | 'rejected'
  | 'timeout'
  | 'connection_failed'
  | 'private_mx'
  | 'smtputf8_unsupported'
  | 'possible_typo'
  | 'accept_all_provider'
  | 'unreliable_provider';

/** One verification result: the spec's fields plus the evidence that explains them. */
export interface VerificationResult {
  email: string;
  status: VerificationStatus;
  syntax_valid: boolean;
  mx_found: boolean;
  smtp_valid: boolean;
  is_disposable: boolean;
  is_role_based: boolean;
  is_free_provider: boolean;
  is_catch_all: boolean;
  domain: string;
  /** Host name of the mail exchanger used; '' when no mail host was found. */
  mx_record: string;
  /** Every mail host of the domain by preference (the domain itself for an implicit MX); [] without one. */
  mx_records: string[];
  /** A corrected address when the domain receives no mail and a likely intended one does; null otherwise. */
  did_you_mean: string | null;
  /** The address as it should be stored: local part as typed (NFC), domain lower-case Unicode (UTS #46); null for bad syntax. */
  normalized_email: string | null;
  score: number;
  reason: VerificationReason;
  smtp_code: number | null;
  smtp_message: string | null;
  duration_ms: number;
  /** When the verdict was reached (ISO 8601, UTC); older than the request when `cached`. */
  verified_at: string;
  /** The verdict was reused from the result cache (VERIFY_RESULT_TTL_MS, the request's max_age). */
  cached: boolean;
}

/** The subset of pino the engine uses, so any pino-like logger fits. */
export interface VerifierLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface VerifierOptions {
  /** `host[:port]` resolvers (IPv6 as `[::1]:53`); empty means the system's. */
  dnsServers: string[];
  dnsTimeoutMs: number;
  dnsTries: number;
  smtpPort: number;
  /** A domain's MX is attacker-controlled: private targets are refused unless this is true. */
  allowPrivateMx: boolean;
  heloName: string;
  mailFrom: string;
  /** Deadline of each network step (connect, greeting, each command). */
  smtpTimeoutMs: number;
  /** Deadline of the whole probe of one domain group, semaphore waits included. */
  probeTimeoutMs: number;
  maxRcptPerSession: number;
  /** Concurrent connections per MX host across all workers (the host job's sessions). */
  mxConcurrency: number;
  redis: RedisClient;
  /** Prefix of every Redis key the engine writes (cache, semaphore, pacing). */
  keyPrefix: string;
  /** Minimum gap between two connection opens to one MX host, across workers. Default 100. */
  mxPacingMs?: number;
  /** Upper bound of any cache entry, seconds. Default 3600. */
  cacheMaxTtlSec?: number;
  /** How long a finished SMTP session stays open for the next probe of its MX host, ms. Default 500. */
  sessionLingerMs?: number;
  /**
   * How long the work of a process that died without a word stays with it (its job locks), ms; the
   * dispatch timers derive from it (dispatch-timers.ts). Default 5000.
   */
  failoverMs?: number;
  /** BullMQ prefix of the verify-hosts queue (QUEUE_PREFIX). Default: `keyPrefix` without its trailing colons. */
  queuePrefix?: string;
  /**
   * Redis Cluster: each MX host's work lists get a hash tag of their own (the host), so that hosts spread over the
   * shards; otherwise they stay under `keyPrefix`'s tag. Default false.
   */
  hostSlots?: boolean;
  /** Host jobs this verifier drains at once (VERIFY_HOST_CONCURRENCY); 0: it drains none. Default 256. */
  drainConcurrency?: number;
  logger?: VerifierLogger;
  /** Popular mail domains a typo is compared with, most popular first (besides freemail's list). Default: typo.ts. */
  typoDomains?: readonly string[];
  /** Known typo-squats added to typo.ts's list: near twins of popular domains whose mail hosts are a squatter's. */
  typoSquatDomains?: readonly string[];
  /** How long a verdict is reused for the same address, ms (0: never). Default 3,600,000. */
  resultTtlMs?: number;
}
