import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import { isClusterConfig, KEY_GROUPS, keyGroup, queueKeyPrefix, type KeyspaceConfig } from '../keyspace.js';
import { verifyHostsQueue } from '../queues/verify-hosts.js';
import { ServiceUnavailableError } from '../errors.js';
import type { JobOutcome } from '../queues/completions.js';
import type { Queues } from '../queues/producer.js';
import type { VerificationResult, VerifierLogger, VerifierOptions } from './types.js';
import { badSyntaxResult, groupByDomain, unfinishedResult, type DomainGroup } from './verifier.js';
import { verdictOptionsFrom } from './verdict-options.js';

/**
 * The verification service on top of the engine: the engine's options from the configuration (for the verify
 * workers, the only processes that probe), and the orchestration of POST /verify and POST /bulk-verify in the HTTP
 * process (the request's domains packed into `verify-domains` jobs, fanned out to any number of workers, one
 * deadline for all of them; a single address is one such job).
 */

/** Resolver attempts per DNS query; with VERIFY_DNS_TIMEOUT_MS each, a lost UDP packet costs one retry. */
export const VERIFY_DNS_TRIES = 2;

/** Where the engine keeps its Redis keys (result, DNS and catch-all caches, host work, replies): its key group. */
export const verifyKeyPrefix = (config: KeyspaceConfig): string =>
  `${keyGroup(config, KEY_GROUPS.verification)}:verify:`;

export function verifierOptionsFrom(
  config: Pick<Config, 'verify' | 'queuePrefix' | 'redisClusterNodes'>,
  redis: RedisClient,
  logger?: VerifierLogger,
): VerifierOptions {
  const v = config.verify;
  return {
    dnsServers: v.dnsServers,
    dnsTimeoutMs: v.dnsTimeoutMs,
    dnsTries: VERIFY_DNS_TRIES,
    smtpPort: v.smtpPort,
    allowPrivateMx: v.allowPrivateMx,
    heloName: v.heloName,
    mailFrom: v.mailFrom,
    smtpTimeoutMs: v.smtpTimeoutMs,
    probeTimeoutMs: v.probeTimeoutMs,
    maxRcptPerSession: v.maxRcptPerSession,
    mxConcurrency: v.mxConcurrency,
    mxPacingMs: v.mxPacingMs,
    failoverMs: v.failoverMs,
    drainConcurrency: v.hostConcurrency,
    ...verdictOptionsFrom(v),
    redis,
    keyPrefix: verifyKeyPrefix(config),
    queuePrefix: queueKeyPrefix(config, verifyHostsQueue.name),
    hostSlots: isClusterConfig(config),
    logger,
  };
}

/**
 * A job carries whole domain groups (a domain is never split: its addresses share DNS, the catch-all probe and the
 * SMTP sessions). Domains with few addresses are packed together until a job holds this many addresses, so a
 * request spanning 100 domains is 4 jobs, not 100: every job costs Redis round trips and CPU in the service, the
 * queue and the worker, while the domains inside one job are probed in parallel anyway.
 */
export const PACKED_JOB_ADDRESSES = 25;

/** Splits domain groups into jobs: big groups alone, small ones packed, biggest first. */
export function packDomainGroups<G extends { emails: readonly string[] }>(groups: readonly G[]): G[][] {
  const jobs: G[][] = [];
  let current: G[] = [];
  let size = 0;
  for (const group of [...groups].sort((a, b) => b.emails.length - a.emails.length)) {
    current.push(group);
    size += group.emails.length;
    if (size >= PACKED_JOB_ADDRESSES) {
      jobs.push(current);
      current = [];
      size = 0;
    }
  }
  if (current.length > 0) jobs.push(current);
  return jobs;
}

/**
 * Job id of one job of one request: the same request (id) and the same addresses give the same job, so a retried
 * enqueue cannot probe twice; the addresses are part of it because a caller may reuse an X-Request-Id.
 */
export function verifyJobId(requestId: string, emails: readonly string[]): string {
  const digest = createHash('sha256')
    .update(requestId)
    .update('\0')
    .update(emails.join('\n'))
    .digest('hex')
    .slice(0, 32);
  return `verify-${digest}`;
}

/** One verify-domains job of a request: its domain groups and their distinct addresses. */
interface DomainGroupJob {
  groups: readonly (DomainGroup & { unique: string[] })[];
  unique: string[];
}

export interface BulkVerifierDeps {
  queues: Pick<Queues, 'enqueueAllAndWait'>;
  deadlineMs: number;
  logger?: VerifierLogger & { error(obj: object, msg?: string): void };
}

export interface BulkVerifier {
  /** One result per entry, in input order, duplicates included; groups unfinished at the deadline are unknown/timeout. */
  verifyBulk(emails: readonly string[], requestId: string, maxAgeSec?: number): Promise<VerificationResult[]>;
  /**
   * One address, as one job of the same queue (bad syntax needs none): unknown/timeout if unfinished at the
   * deadline; a ServiceUnavailableError if the job failed after its retries (the engine throws only when Redis
   * fails) or could not be enqueued, as when the HTTP process probed inline.
   */
  verifyOne(email: string, requestId: string, maxAgeSec?: number): Promise<VerificationResult>;
}

export function createBulkVerifier(deps: BulkVerifierDeps): BulkVerifier {
  async function verifyAll(
    emails: readonly string[],
    requestId: string,
    single: boolean,
    maxAgeSec: number | undefined,
  ): Promise<VerificationResult[]> {
    const started = performance.now();
    const deadlineAt = Date.now() + deps.deadlineMs;
    const results = new Array<VerificationResult>(emails.length);
    const groups = groupByDomain(emails).map((g) => ({ ...g, unique: [...new Set(g.emails)] }));

    // Bad syntax needs no network: graded here. The rest goes out as jobs of whole domains, added in one round trip
    // and awaited together; each job answers for its distinct addresses, duplicates are filled in from them.
    const local = groups.find((g) => g.domain === '');
    const jobs = packDomainGroups(groups.filter((g) => g.domain !== '')).map((job) => {
      const unique = job.flatMap((g) => g.unique);
      return { groups: job, unique, jobId: verifyJobId(requestId, unique) };
    });
    const place = (job: DomainGroupJob, done: readonly VerificationResult[]) => {
      const byEmail = new Map(job.unique.map((email, k) => [email, done[k]!]));
      for (const group of job.groups)
        group.emails.forEach((email, k) => (results[group.indexes[k]!] = byEmail.get(email)!));
    };
    if (local) place({ groups: [local], unique: local.unique }, local.unique.map(badSyntaxResult));

    let outcomes: JobOutcome[];
    try {
      outcomes = await deps.queues.enqueueAllAndWait(
        'verify',
        'verify-domains',
        jobs.map(({ unique, jobId }) => ({
          payload: { emails: unique, expiresAt: deadlineAt, requestId, maxAgeSec },
          jobId,
        })),
        Math.max(1, deadlineAt - Date.now()),
      );
    } catch (err) {
      deps.logger?.error({ err }, 'bulk verification could not enqueue its jobs');
      throw new ServiceUnavailableError('Verification is temporarily unavailable; try again later');
    }
    jobs.forEach((job, k) => {
      const outcome = outcomes[k]!;
      // The value was checked against the job's result schema by the wait; a list of another length would be a
      // worker out of step with this one, and its results cannot be placed.
      const value = outcome.state === 'completed' ? outcome.value : null;
      if (Array.isArray(value) && value.length === job.unique.length) return place(job, value);
      // A job that failed after its retries: its addresses could not be verified, the others still count. A job
      // not done by the deadline, or skipped by a worker that took it too late ({skipped}), timed out.
      if (outcome.state === 'failed' && single) {
        deps.logger?.error({ jobId: job.jobId, err: outcome.reason }, 'verify job failed');
        throw new ServiceUnavailableError('Verification is temporarily unavailable; try again later');
      }
      const reason = outcome.state === 'failed' ? 'temporary_failure' : 'timeout';
      if (outcome.state === 'failed')
        deps.logger?.warn(
          { jobId: job.jobId, err: outcome.reason },
          'verify job failed; its addresses are unknown',
        );
      place(
        job,
        job.unique.map((email) => unfinishedResult(email, reason, performance.now() - started)),
      );
    });
    deps.logger?.info(
      {
        emails: emails.length,
        domains: groups.length,
        jobs: jobs.length,
        ms: Math.round(performance.now() - started),
      },
      single ? 'verified' : 'bulk verified',
    );
    return results;
  }

  return {
    verifyBulk: (emails, requestId, maxAgeSec) => verifyAll(emails, requestId, false, maxAgeSec),
    verifyOne: async (email, requestId, maxAgeSec) =>
      (await verifyAll([email], requestId, true, maxAgeSec))[0]!,
  };
}
