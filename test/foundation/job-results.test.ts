import { randomBytes } from 'node:crypto';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutcome, createQueues, type Queues } from '../../shared/queues/producer.js';
import { connectRedis, type Redis } from '../../shared/redis.js';
import { REDIS_URL } from '../support/postgres.js';
import { deleteKeys } from '../support/runtime.js';

// Every job of the catalog declares its result schema; a producer waiting for a job gets the value checked
// against it. Raw BullMQ workers stand for handlers out of step with their declaration (an older worker during
// a deploy, a bug): what they return is a failed job for the waiter, never an unchecked value.

const result = (email: string) => ({
  email,
  status: 'valid',
  syntax_valid: true,
  mx_found: true,
  smtp_valid: true,
  is_disposable: false,
  is_role_based: false,
  is_free_provider: false,
  is_catch_all: false,
  domain: 'example.test',
  mx_record: 'mx.example.test',
  score: 90,
  reason: 'accepted',
  smtp_code: 250,
  smtp_message: '2.1.5 Ok',
  duration_ms: 12,
  mx_records: ['mx.example.test'],
  did_you_mean: null,
  verified_at: '2026-11-25T07:00:00.000Z',
  cached: false,
  normalized_email: email,
});

describe('job results checked against the catalog', { timeout: 30_000 }, () => {
  const prefix = `{agora-test-results-${randomBytes(4).toString('hex')}}`;
  let connection: Redis;
  let queues: Queues;
  const workers: Worker[] = [];

  beforeAll(async () => {
    connection = connectRedis(REDIS_URL, 'producer');
    queues = createQueues(connection, prefix);
    const options = { connection: { url: REDIS_URL }, prefix, concurrency: 10 };
    // Answers as declared for "right", with another shape for anything else.
    workers.push(
      new Worker(
        'ping',
        async (job) =>
          job.data.message === 'right'
            ? { message: 'right', worker: process.pid, attempt: 1 }
            : { message: 42, worker: 'me' },
        options,
      ),
      new Worker(
        'verify',
        async (job) => {
          const emails = job.data.emails as string[];
          if (emails[0]!.startsWith('skip')) return { skipped: 'expired' };
          if (emails[0]!.startsWith('bad')) return emails.map((email) => ({ email, status: 'maybe' }));
          return emails.map(result);
        },
        options,
      ),
    );
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await queues.close();
    connection.disconnect();
    await deleteKeys(`${prefix}*`);
  });

  it('gives enqueueAndWait the declared value, and an error for another shape', async () => {
    const value = await queues.enqueueAndWait('ping', 'echo', { message: 'right' }, 15_000);
    // Typed as the declaration: no cast needed to read it.
    expect(value.message).toBe('right');
    expect(value.worker).toBe(process.pid);
    await expect(queues.enqueueAndWait('ping', 'echo', { message: 'wrong' }, 15_000)).rejects.toThrow(
      /invalid ping\/echo result/,
    );
  });

  it('makes a result that does not match a failed outcome of enqueueAllAndWait, the others completed', async () => {
    const outcomes = await queues.enqueueAllAndWait(
      'verify',
      'verify-domains',
      [
        { payload: { emails: ['ann@example.test', 'ben@example.test'] }, jobId: `ok-${prefix}` },
        { payload: { emails: ['bad@example.test'] }, jobId: `bad-${prefix}` },
        { payload: { emails: ['skip@example.test'] }, jobId: `skip-${prefix}` },
      ],
      15_000,
    );
    expect(outcomes[0]).toEqual({
      state: 'completed',
      value: [result('ann@example.test'), result('ben@example.test')],
    });
    expect(outcomes[1]).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/invalid verify\/verify-domains result/),
    });
    expect(outcomes[2]).toEqual({ state: 'completed', value: { skipped: 'expired' } });
  });

  it('leaves the BullMQ scripts off the connection it was given, whose pipelines would each copy them', () => {
    // The queues above have added jobs, so BullMQ has defined its scripts on the connection it was handed.
    expect(Object.keys((connection as unknown as { scriptsSet: object }).scriptsSet)).toEqual([]);
    const producer = queues.queue('verify');
    expect(producer.opts.connection).not.toBe(connection);
  });

  it('passes failed and timed-out outcomes through unchanged', () => {
    expect(checkOutcome('ping', 'echo', { state: 'timeout' })).toEqual({ state: 'timeout' });
    expect(checkOutcome('ping', 'echo', { state: 'failed', reason: 'boom' })).toEqual({
      state: 'failed',
      reason: 'boom',
    });
  });
});
