import os from 'node:os';
import path from 'node:path';
import { productionProblems } from './production-guards.js';
import { QUEUE_NAMES, type QueueName } from './queues/names.js';

/**
 * One environment schema for every process. Each variable is parsed once at boot; every bad variable is
 * collected so an operator fixes them all in one go instead of one restart per typo.
 */

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string;
  string(name: string): string | undefined;
  string(name: string, fallback?: string): string | undefined {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${name}=${JSON.stringify(value)}: expected an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name}=${JSON.stringify(value)}: expected true or false`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}=${JSON.stringify(value)}: expected one of ${allowed.join(', ')}`);
    return fallback;
  }

  url(name: string, protocols: string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return value;
    } catch {
      this.problems.push(
        `${name}: expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
      );
      return undefined;
    }
  }

  list(name: string, item: (entry: string) => boolean, what: string): string[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    const entries = value
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const bad = entries.filter((e) => !item(e));
    if (bad.length > 0)
      this.problems.push(`${name}: ${bad.map((b) => JSON.stringify(b)).join(', ')} not ${what}`);
    return entries;
  }
}

function isPostgresUrl(value: string): boolean {
  try {
    return ['postgres:', 'postgresql:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;
const CLUSTER_NODE = /^[A-Za-z0-9.-]+:\d{1,5}$/;
// Declared with the queues; re-exported for the modules that take them from the configuration.
export { QUEUE_NAMES, type QueueName };

function trustProxy(reader: Reader, env: Env): boolean | number | string[] {
  const value = env.TRUST_PROXY?.trim();
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return reader.list('TRUST_PROXY', (e) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e), 'an IP address or CIDR');
}

export function loadConfig(env: Env = process.env) {
  const r = new Reader(env);
  const heloName = r.string('VERIFY_HELO_NAME', os.hostname());
  const qaPort = r.int('QA_PORT', 3000, 0, 65535);
  const config = {
    env: r.oneOf('NODE_ENV', ['development', 'production', 'test'], 'development'),
    databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    // A query that hangs must not hang its request: PostgreSQL cancels statements running longer (0 = no limit).
    databaseStatementTimeoutMs: r.int('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    // A process that stops mid-transaction (its event loop blocked, the process stopped: its kernel still answers
    // keepalives) would hold its row locks for good: PostgreSQL ends a session idle in a transaction this long.
    databaseIdleTransactionTimeoutMs: r.int('DATABASE_IDLE_TRANSACTION_TIMEOUT_MS', 600_000, 0, 86_400_000),
    // PostgreSQL streaming replicas for public reads (docs/operations.md, "Read replicas"); empty: every read on
    // DATABASE_URL. A replica lagging behind the primary by more than the max lag is left out until it catches up.
    databaseReadUrls: r.list('DATABASE_READ_URLS', isPostgresUrl, 'a postgres:// URL'),
    databaseReplicaMaxLagMs: r.int('DATABASE_REPLICA_MAX_LAG_MS', 2000, 100, 600_000),
    dataDir: path.resolve(r.string('DATA_DIR', '.data')),
    // An empty embedded database gets the bundled beer.stackexchange.com dump on first start (never a server's).
    demoData: r.bool('DEMO_DATA', true),
    redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:']),
    // A Redis Cluster's nodes (host:port, any few of them): every process then uses a cluster-aware client and the
    // keys spread over the shards by hash tag (shared/keyspace.ts). Empty: the single Redis of REDIS_URL.
    redisClusterNodes: r.list('REDIS_CLUSTER_NODES', (e) => CLUSTER_NODE.test(e), 'host:port'),
    // Hash-tagged so that every key of a queue lands in one Redis Cluster slot.
    queuePrefix: r.string('QUEUE_PREFIX', '{agora}'),
    host: r.string('HOST', '0.0.0.0'),
    qaPort,
    verifyPort: r.int('VERIFY_PORT', 3001, 0, 65535),
    // Base of links in emails (confirmation, unsubscribe); the Q&A service's own address by default.
    publicUrl: r.url('PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${qaPort}`,
    logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    trustProxy: trustProxy(r, env),
    adminToken: r.string('ADMIN_TOKEN'),
    appSecret: r.string('APP_SECRET'),
    // Bearer token for GET /metrics on the two HTTP services (docs/security.md "Metrics").
    metricsToken: r.string('METRICS_TOKEN'),
    // Secure flag of the admin cookies: always in production unless COOKIE_SECURE=false says the deployment is
    // plain http; elsewhere 'auto' (set when the request came over https).
    cookieSecure:
      env.COOKIE_SECURE?.trim() || env.NODE_ENV?.trim() === 'production'
        ? r.bool('COOKIE_SECURE', true)
        : ('auto' as const),
    smtpUrl: r.url('SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: r.string('MAIL_FROM', 'Agora <no-reply@localhost>'),
    // Connect, greeting and idle-socket timeout of outgoing mail (newsletter, confirmations).
    smtpTimeoutMs: r.int('SMTP_TIMEOUT_MS', 30_000, 100, 600_000),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    // How long a request may take to arrive whole (headers and body) before it is answered 408
    // (services/http/server.ts).
    requestTimeoutMs: r.int('HTTP_REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    // Origins allowed to read the public Q&A API from a browser ('*': any); set it empty to send no CORS headers.
    corsOrigins:
      env.CORS_ORIGINS === undefined
        ? ['*']
        : r.list('CORS_ORIGINS', (e) => e === '*' || /^https?:\/\/[^/\s]+$/.test(e), "'*' or an origin"),
    // Load shedding (503 + Retry-After) past this mean event-loop delay or heap size; 0 (the default) turns a check
    // off: embedded PGlite runs queries on the event loop, so one long query would make a lone process shed.
    maxEventLoopDelayMs: r.int('MAX_EVENT_LOOP_DELAY_MS', 0, 0, 600_000),
    maxHeapUsedMb: r.int('MAX_HEAP_USED_MB', 0, 0, 1_048_576),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
    // How long a job's lock lives without renewal: a worker that dies loses its jobs to another after this.
    workerLockMs: r.int('WORKER_LOCK_MS', 30_000, 1000, 600_000),
    workerQueues: r.list(
      'WORKER_QUEUES',
      (q) => (QUEUE_NAMES as readonly string[]).includes(q),
      'a queue name',
    ) as QueueName[],
    // Prometheus listener of a workers-role process (GET /metrics, /health); 0 turns it off.
    workerMetricsPort: r.int('WORKER_METRICS_PORT', 9464, 0, 65535),
    rateLimits: {
      enabled: r.bool('RATE_LIMIT_ENABLED', true),
      // An IPv6 client is counted as this prefix of its address (shared/net/client-network.ts).
      ipv6Prefix: r.int('RATE_LIMIT_IPV6_PREFIX', 64, 8, 128),
      anonymous: {
        hour: r.int('RATE_LIMIT_ANONYMOUS_HOURLY', 60, 1, 1e9),
        day: r.int('RATE_LIMIT_ANONYMOUS_DAILY', 500, 1, 1e9),
      },
      authenticated: {
        hour: r.int('RATE_LIMIT_AUTHENTICATED_HOURLY', 300, 1, 1e9),
        day: r.int('RATE_LIMIT_AUTHENTICATED_DAILY', 5000, 1, 1e9),
      },
      premium: {
        hour: r.int('RATE_LIMIT_PREMIUM_HOURLY', 1000, 1, 1e9),
        day: r.int('RATE_LIMIT_PREMIUM_DAILY', 50000, 1, 1e9),
      },
      verify: {
        hour: r.int('VERIFY_RATE_LIMIT_HOURLY', 1000, 1, 1e9),
        day: r.int('VERIFY_RATE_LIMIT_DAILY', 10000, 1, 1e9),
      },
    },
    qa: {
      // Stack Exchange's "create tags" privilege; a key with the admin scope may always create tags.
      newTagMinReputation: r.int('QA_NEW_TAG_MIN_REPUTATION', 1500, 0, 1e9),
      // The same user may not post the same title twice within this many seconds.
      duplicateTitleSeconds: r.int('QA_DUPLICATE_TITLE_SECONDS', 60, 0, 86_400),
      // Public GET reads are answered from an in-process cache cleared on every change (docs/qa-api.md); the TTL
      // only bounds staleness while change notifications cannot arrive. 0 turns the cache off.
      readCacheTtlMs: r.int('QA_READ_CACHE_TTL_MS', 5000, 0, 3_600_000),
      readCacheMaxMb: r.int('QA_READ_CACHE_MAX_MB', 64, 1, 65_536),
      // GET /changes keeps this many days of changes; an older cursor is a 410 (docs/qa-api.md, "Change feed").
      changesRetentionDays: r.int('QA_CHANGES_RETENTION_DAYS', 30, 1, 3650),
    },
    verify: {
      dnsServers: r.list('VERIFY_DNS_SERVERS', (e) => HOST_PORT.test(e), 'host[:port]'),
      dnsTimeoutMs: r.int('VERIFY_DNS_TIMEOUT_MS', 3000, 50, 60_000),
      smtpPort: r.int('VERIFY_SMTP_PORT', 25, 1, 65535),
      allowPrivateMx: r.bool('VERIFY_ALLOW_PRIVATE_MX', false),
      heloName,
      mailFrom: r.string('VERIFY_MAIL_FROM', `verify@${heloName}`),
      smtpTimeoutMs: r.int('VERIFY_SMTP_TIMEOUT_MS', 10_000, 50, 300_000),
      probeTimeoutMs: r.int('VERIFY_PROBE_TIMEOUT_MS', 45_000, 100, 600_000),
      mxConcurrency: r.int('VERIFY_MX_CONCURRENCY', 2, 1, 100),
      maxRcptPerSession: r.int('VERIFY_MAX_RCPT_PER_SESSION', 20, 1, 100),
      bulkDeadlineMs: r.int('VERIFY_BULK_DEADLINE_MS', 60_000, 100, 600_000),
      // Jobs one worker process runs at once (≤ 25 addresses each, mostly waiting on replies): bench/verify.ts
      // measured 16, 32 and 64 (docs/benchmarks.md, "Verification").
      workerConcurrency: r.int('VERIFY_WORKER_CONCURRENCY', 32, 1, 1000),
      // MX hosts one verifier drains at once (host jobs of verify-hosts, each with up to VERIFY_MX_CONCURRENCY
      // sessions to its host, mostly waiting on replies).
      hostConcurrency: r.int('VERIFY_HOST_CONCURRENCY', 256, 1, 1000),
      // Minimum gap between two connection opens to one MX host (0: none).
      mxPacingMs: r.int('VERIFY_MX_PACING_MS', 100, 0, 60_000),
      // How long a verify worker that died without a word (SIGKILL, OOM) keeps its jobs (verify and host jobs)
      // before the others take them over; every dispatch timer derives from it (verification/dispatch-timers.ts).
      failoverMs: r.int('VERIFY_FAILOVER_MS', 5000, 1000, 600_000),
      // Popular mail domains a typed domain is compared with for did_you_mean, most popular first (empty: the default
      // list of shared/verification/typo.ts).
      typoDomains: r.list(
        'VERIFY_TYPO_DOMAINS',
        (e) => /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(e),
        'a domain name',
      ),
      // Known typo-squats of popular mail domains, added to the list of shared/verification/typo.ts.
      typoSquatDomains: r.list(
        'VERIFY_TYPO_SQUAT_DOMAINS',
        (e) => /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(e),
        'a domain name',
      ),
      // How long a verdict is reused for the same address (0: never); a request's max_age may ask for fresher.
      resultTtlMs: r.int('VERIFY_RESULT_TTL_MS', 3_600_000, 0, 30 * 86_400_000),
    },
    // Asynchronous verification lists (POST /lists): the largest list accepted, in rows and in bytes of upload.
    verifyLists: {
      maxAddresses: r.int('VERIFY_LIST_MAX_ADDRESSES', 1_000_000, 1, 100_000_000),
      maxBytes: r.int('VERIFY_LIST_MAX_BYTES', 64 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
      // A list's greylisted (temporarily deferred) address is probed again after 1, 3 and then 6 times this delay,
      // as long as it stays within the window of its first deferral; then it settles as unknown. Window 0: no
      // retries (settled at once, as /bulk-verify does).
      retryDelayMs: r.int('VERIFY_LIST_RETRY_DELAY_MS', 300_000, 100, 86_400_000),
      retryWindowMs: r.int('VERIFY_LIST_RETRY_WINDOW_MS', 3_600_000, 0, 7 * 86_400_000),
    },
    ai: {
      providerUrl: r.url('AI_PROVIDER_URL', ['http:', 'https:']),
      providerKey: r.string('AI_PROVIDER_KEY'),
      model: r.string('AI_MODEL'),
      timeoutMs: r.int('AI_TIMEOUT_MS', 15_000, 100, 300_000),
      deadlineMs: r.int('AI_DEADLINE_MS', 20_000, 100, 300_000),
    },
    // Outbound deliveries (list callbacks, Q&A webhooks): docs/webhooks.md.
    webhook: {
      // Targets resolving to loopback/private/reserved addresses are refused unless this is set (tests, labs).
      allowPrivate: r.bool('WEBHOOK_ALLOW_PRIVATE', false),
      // One attempt (resolve, connect, send, response head) ends after this; a slow receiver is retried later.
      timeoutMs: r.int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      // Q&A webhooks (docs/qa-api.md, "Webhooks"): wait before the second attempt (each later wait doubles; the
      // default spreads 10 attempts over about a day), how often committed changes are fanned out to subscriptions,
      // and how many failed attempts in a row disable a subscription.
      qaBackoffMs: r.int('WEBHOOK_BACKOFF_MS', 170_000, 0, 86_400_000),
      dispatchEveryMs: r.int('WEBHOOK_DISPATCH_EVERY_MS', 1000, 100, 3_600_000),
      disableAfterFailures: r.int('WEBHOOK_DISABLE_AFTER_FAILURES', 50, 1, 100_000),
    },
    newsletter: {
      digestHourUtc: r.int('NEWSLETTER_DIGEST_HOUR', 7, 0, 23),
      sendPerSecond: r.int('NEWSLETTER_SEND_PER_SECOND', 10, 1, 10_000),
      bounceLimit: r.int('NEWSLETTER_BOUNCE_LIMIT', 3, 1, 100),
    },
  };
  if (config.databaseReadUrls.length > 0 && !config.databaseUrl)
    r.problems.push(
      'DATABASE_READ_URLS needs DATABASE_URL: the embedded database (no DATABASE_URL) has no replicas to read from',
    );
  if (config.env === 'production') r.problems.push(...productionProblems(config));
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

export type Config = ReturnType<typeof loadConfig>;
