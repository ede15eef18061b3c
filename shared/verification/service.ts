import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Queues } from '../queues/producer.js';
import type { VerificationResult, VerifierLogger, VerifierOptions } from './types.js';
import { groupByDomain, unfinishedResult, type Verifier } from './verifier.js';

/**
 * The verification service on top of the engine: the engine's options from the configuration, and the bulk
 * orchestration of POST /bulk-verify (the request's domains packed into `verify-domains` jobs, fanned out to any
 * number of workers, one deadline for all of them). Used by the verify HTTP app and by the verify workers.
 */

/** Resolver attempts per DNS query; with VERIFY_DNS_TIMEOUT_MS each, a lost UDP packet costs one retry. */
export const VERIFY_DNS_TRIES = 2;

/** Where the engine keeps its Redis keys (DNS and catch-all cache, MX semaphore, pacing): under the deployment's prefix. */
export const verifyKeyPrefix = (queuePrefix: string): string => `${queuePrefix}:verify:`;

export function verifierOptionsFrom(
  config: Pick<Config, 'verify' | 'queuePrefix'>,
  redis: Redis,
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
    redis,
    keyPrefix: verifyKeyPrefix(config.queuePrefix),
    logger,
  };
}

/**
 * A job carries whole domain groups (a domain is never split: its addresses share DNS, the catch-all probe and the
 * SMTP sessions). Domains with few addresses are packed together until a job holds this many addresses, so a
 * request spanning 100 domains is ~10 jobs, not 100: every job costs Redis round trips and CPU in the service, the
 * queue and the worker, while the domains inside one job are probed in parallel anyway.
 */
export const PACKED_JOB_ADDRESSES = 10;

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

export interface BulkVerifierDeps {
  queues: Pick<Queues, 'enqueueAndWait' | 'queue'>;
  /** Used for the entries with bad syntax only, which need no network and so no job. */
  verifier: Pick<Verifier, 'verifyDomainGroup'>;
  deadlineMs: number;
  logger?: VerifierLogger & { error(obj: object, msg?: string): void };
}

export interface BulkVerifier {
  /** One result per entry, in input order, duplicates included; groups unfinished at the deadline are unknown/timeout. */
  verifyBulk(emails: readonly string[], requestId: string): Promise<VerificationResult[]>;
}

const isResultList = (value: unknown, length: number): value is VerificationResult[] =>
  Array.isArray(value) &&
  value.length === length &&
  value.every((r) => typeof r === 'object' && r !== null && 'status' in r);

export function createBulkVerifier(deps: BulkVerifierDeps): BulkVerifier {
  // Every job being waited for holds a 'closing' listener on the queue: 100 per request, times the requests in flight.
  deps.queues.queue('verify').setMaxListeners(0);
  async function verifyBulk(emails: readonly string[], requestId: string): Promise<VerificationResult[]> {
    const started = performance.now();
    const deadlineAt = Date.now() + deps.deadlineMs;
    const results = new Array<VerificationResult>(emails.length);
    const groups = groupByDomain(emails).map((g) => ({ ...g, unique: [...new Set(g.emails)] }));

    // Each job resolves to the results of its distinct addresses; duplicates are filled in from them.
    const settle = async (unique: string[]): Promise<VerificationResult[]> => {
      const jobId = verifyJobId(requestId, unique);
      const unfinished = (reason: 'timeout' | 'temporary_failure') =>
        unique.map((email) => unfinishedResult(email, reason, performance.now() - started));
      try {
        const value = await deps.queues.enqueueAndWait(
          'verify',
          'verify-domains',
          { emails: unique, expiresAt: deadlineAt, requestId },
          Math.max(1, deadlineAt - Date.now()),
          { jobId },
        );
        // A worker that took the job after the deadline skips it ({skipped}): the same as not finishing.
        return isResultList(value, unique.length) ? value : unfinished('timeout');
      } catch (err) {
        if (err instanceof ServiceUnavailableError) return unfinished('timeout');
        // The job ran and failed after its retries: those addresses could not be verified, the others still count.
        // Anything else (Redis unreachable while enqueueing) fails the request.
        const state = await deps.queues
          .queue('verify')
          .getJobState(jobId)
          .catch(() => 'unreachable');
        if (state !== 'failed') throw err;
        deps.logger?.warn(
          { jobId, err: (err as Error).message },
          'verify job failed; its addresses are unknown',
        );
        return unfinished('temporary_failure');
      }
    };

    // Bad syntax needs no network: graded here. The rest goes out as jobs of whole domains.
    const local = groups.filter((g) => g.domain === '');
    const jobs = [...local.map((g) => [g]), ...packDomainGroups(groups.filter((g) => g.domain !== ''))];
    const settled = await Promise.allSettled(
      jobs.map(async (job) => {
        const unique = job.flatMap((g) => g.unique);
        const done =
          job[0]!.domain === '' ? await deps.verifier.verifyDomainGroup(unique) : await settle(unique);
        const byEmail = new Map(unique.map((email, k) => [email, done[k]!]));
        for (const group of job)
          group.emails.forEach((email, k) => (results[group.indexes[k]!] = byEmail.get(email)!));
      }),
    );
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure) {
      deps.logger?.error({ err: failure.reason }, 'bulk verification could not enqueue its jobs');
      throw new ServiceUnavailableError('Verification is temporarily unavailable; try again later');
    }
    deps.logger?.info(
      {
        emails: emails.length,
        domains: groups.length,
        jobs: jobs.length,
        ms: Math.round(performance.now() - started),
      },
      'bulk verified',
    );
    return results;
  }

  return { verifyBulk };
}
