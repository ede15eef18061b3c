import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CatalogQueue } from './queues/catalog.js';
import type { Queues } from './queues/producer.js';

/**
 * Every Prometheus metric of the system, defined once so that any module (routes, workers, domain code)
 * increments the same series. One registry per process: the services serve it on `/metrics`, a worker
 * process on WORKER_METRICS_PORT (workers/metrics-server.ts). Label values are bounded (route patterns, never
 * raw URLs; statuses from fixed sets) so a scan of random URLs cannot blow up the series count.
 */
export const registry = new Registry();
// No prefix: the standard process_* and nodejs_* names, which stock Node.js dashboards query.
collectDefaultMetrics({ register: registry });

/** Seconds buckets for HTTP: most answers are milliseconds; bulk verification and ai.php wait up to a minute. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Jobs range from a ping (ms) to an SMTP probe of a slow MX (tens of seconds) and a large digest run. */
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const httpRequests = new Counter({
  name: 'agora_http_requests_total',
  help: 'HTTP requests answered, by service, method, route pattern and status code',
  labelNames: ['service', 'method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'agora_http_request_duration_seconds',
  help: 'Time from request received to response sent, by service, method, route pattern and status code',
  labelNames: ['service', 'method', 'route', 'status'] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});

/** `plan`: anonymous | authenticated | premium | verify; `window`: hour | day. */
export const rateLimitRejections = new Counter({
  name: 'agora_rate_limit_rejections_total',
  help: 'Requests refused with 429, by service, plan and the window that ran out',
  labelNames: ['service', 'plan', 'window'] as const,
  registers: [registry],
});

/**
 * 1 while a dependency answered the last readiness check, else 0; `required`: "false" for one the service can
 * serve without (it then reports itself degraded, not unready). Set by every `/ready` probe.
 */
export const dependencyUp = new Gauge({
  name: 'agora_dependency_up',
  help: 'Whether a dependency answered the last readiness check (1) or not (0), by service, dependency and whether the service needs it',
  labelNames: ['service', 'dependency', 'required'] as const,
  registers: [registry],
});

/** Read replicas (shared/db/replicas): each one's state after its last health check, and where reads went. */
export const replicaUp = new Gauge({
  name: 'agora_database_replica_up',
  help: 'Whether a read replica is in use (1: answered its last check within the max lag) or left out (0)',
  labelNames: ['replica'] as const,
  registers: [registry],
});
export const replicaLag = new Gauge({
  name: 'agora_database_replica_lag_seconds',
  help: "How far a read replica's replay is behind the primary's WAL, as of its last check",
  labelNames: ['replica'] as const,
  registers: [registry],
});
export const databaseReads = new Counter({
  name: 'agora_database_reads_total',
  help: 'Requests of routes that may read from a replica, by where they read (a replica, or primary) and why',
  labelNames: ['target', 'reason'] as const,
  registers: [registry],
});

export const jobDuration = new Histogram({
  name: 'agora_job_duration_seconds',
  help: 'Processing time of a job attempt, by queue, job name and outcome (completed | failed)',
  labelNames: ['queue', 'job', 'outcome'] as const,
  buckets: JOB_BUCKETS,
  registers: [registry],
});

/** `final`: "true" when the attempt was the last one (the job is now in the failed set), else it will retry. */
export const jobFailures = new Counter({
  name: 'agora_job_failures_total',
  help: 'Failed job attempts, by queue, job name and whether no retry is left',
  labelNames: ['queue', 'job', 'final'] as const,
  registers: [registry],
});

/** `status`: valid | invalid | risky | unknown; `source`: single (POST /verify) | bulk (worker). */
export const verificationResults = new Counter({
  name: 'agora_verification_results_total',
  help: 'Email verification results, by status and by where the check ran',
  labelNames: ['status', 'source'] as const,
  registers: [registry],
});

/** `frequency`: daily | weekly | monthly. */
export const digestsSent = new Counter({
  name: 'agora_newsletter_digests_sent_total',
  help: 'Newsletter digests handed to the SMTP server, by frequency',
  labelNames: ['frequency'] as const,
  registers: [registry],
});

export type QueueDepth = Record<string, Partial<Record<QueueState, number>>>;
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'failed',
  'completed',
] as const;
type QueueState = (typeof QUEUE_STATES)[number];

let depthSource: (() => Promise<QueueDepth>) | undefined;
// A scrape must never hang on Redis: past this the gauge keeps its last values.
const DEPTH_TIMEOUT_MS = 2000;

/**
 * Jobs per queue and state, read from Redis at scrape time. The depth is a fact of the whole deployment, so
 * every process that reports it reports the same numbers: aggregate with `max by (queue, state)`, not `sum`.
 */
export const queueDepth = new Gauge({
  name: 'agora_queue_jobs',
  help: 'Jobs in each queue by state, read from Redis when scraped',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    if (!depthSource) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), DEPTH_TIMEOUT_MS);
    });
    const depth = await Promise.race([depthSource().catch(() => undefined), deadline]);
    clearTimeout(timer);
    if (!depth) return;
    for (const [queue, counts] of Object.entries(depth)) {
      for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
    }
  },
});

/** Sets where the queue depth gauge reads from (the process's queue producers); the last caller wins. */
export function reportQueueDepth(source: () => Promise<QueueDepth>): void {
  depthSource = source;
}

/** A depth source over the process's producers: one getJobCounts (a single Redis round trip) per queue. */
export const queueDepthOf =
  (queues: Pick<Queues, 'queue'>, names: readonly CatalogQueue[]) => async (): Promise<QueueDepth> =>
    Object.fromEntries(
      await Promise.all(
        names.map(async (name) => [name, await queues.queue(name).getJobCounts(...QUEUE_STATES)]),
      ),
    );

/** The Prometheus text exposition of this process's registry. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** What recordJob needs of a BullMQ job (structural, so shared/ does not depend on a Worker). */
interface FinishedJob {
  name: string;
  processedOn?: number;
  finishedOn?: number;
  attemptsMade: number;
  opts: { attempts?: number };
}

/** Observes one finished attempt: called from the worker pool's `completed` and `failed` events. */
export function recordJob(
  queue: string,
  job: FinishedJob,
  outcome: 'completed' | 'failed',
  err?: Error,
): void {
  if (job.processedOn) {
    const seconds = Math.max(0, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000);
    jobDuration.observe({ queue, job: job.name, outcome }, seconds);
  }
  if (outcome === 'failed') {
    const final = err?.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    jobFailures.inc({ queue, job: job.name, final: String(final) });
  }
}
