import { randomBytes } from 'node:crypto';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompletions, QueueClosedError, type Completions } from '../../shared/queues/completions.js';
import { REDIS_URL } from '../support/postgres.js';
import { deleteKeys } from '../support/runtime.js';

type Data = { mode: 'ok' | 'fail' | 'hold'; value?: string };

// Long enough that a wait which wrongly ran to its deadline would exceed the test's own timeout.
const NEVER_MS = 60_000;

describe('waiting for a batch of jobs (completions)', { timeout: 20_000 }, () => {
  const prefix = `{agora-test-completions-${randomBytes(4).toString('hex')}}`;
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  let queue: Queue<Data>;
  let events: QueueEvents;
  let worker: Worker<Data>;
  let completions: Completions;
  let releaseHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => (releaseHeld = resolve));
  const add = (jobs: { id: string; data: Data }[]) => () =>
    queue.addBulk(jobs.map(({ id, data }) => ({ name: 'job', data, opts: { jobId: id, attempts: 1 } })));

  beforeAll(async () => {
    queue = new Queue<Data>('completions', { connection, prefix });
    events = new QueueEvents('completions', { connection: { url: REDIS_URL }, prefix });
    await events.waitUntilReady();
    worker = new Worker<Data>(
      'completions',
      async (job) => {
        if (job.data.mode === 'fail') throw new Error(`refused ${job.data.value}`);
        if (job.data.mode === 'hold') await held;
        return { echo: job.data.value };
      },
      { connection: { url: REDIS_URL }, prefix, concurrency: 10 },
    );
    completions = createCompletions(events, queue);
  });
  afterAll(async () => {
    releaseHeld();
    await worker.close();
    await events.close();
    await queue.close();
    connection.disconnect();
    await deleteKeys(`${prefix}*`);
  });

  it('answers one outcome per job, in order: completed with its value, failed with its reason, timeout', async () => {
    const outcomes = await completions.waitFor(
      ['a-ok', 'a-fail', 'a-hold', 'a-ok2'],
      3000,
      add([
        { id: 'a-ok', data: { mode: 'ok', value: 'one' } },
        { id: 'a-fail', data: { mode: 'fail', value: 'two' } },
        { id: 'a-hold', data: { mode: 'hold' } },
        { id: 'a-ok2', data: { mode: 'ok', value: 'four' } },
      ]),
    );
    expect(outcomes).toEqual([
      { state: 'completed', value: { echo: 'one' } },
      { state: 'failed', reason: 'refused two' },
      { state: 'timeout' },
      { state: 'completed', value: { echo: 'four' } },
    ]);
  });

  it('settles a job id that already ended from its stored state (a retried request), not at the deadline', async () => {
    const first = await completions.waitFor(
      ['b-ok', 'b-fail'],
      NEVER_MS,
      add([
        { id: 'b-ok', data: { mode: 'ok', value: 'kept' } },
        { id: 'b-fail', data: { mode: 'fail', value: 'kept' } },
      ]),
    );
    expect(first.map((o) => o.state)).toEqual(['completed', 'failed']);
    // The same ids again: BullMQ keeps the finished jobs and announces the adds as duplicates.
    const again = await completions.waitFor(
      ['b-ok', 'b-fail'],
      NEVER_MS,
      add([
        { id: 'b-ok', data: { mode: 'ok', value: 'ignored' } },
        { id: 'b-fail', data: { mode: 'ok', value: 'ignored' } },
      ]),
    );
    expect(again).toEqual([
      { state: 'completed', value: { echo: 'kept' } },
      { state: 'failed', reason: 'refused kept' },
    ]);
  });

  it('lets two waiters share a job id', async () => {
    const both = await Promise.all([
      completions.waitFor(['c-ok'], NEVER_MS, add([{ id: 'c-ok', data: { mode: 'ok', value: 'shared' } }])),
      completions.waitFor(['c-ok'], NEVER_MS, async () => {}),
    ]);
    expect(both).toEqual([
      [{ state: 'completed', value: { echo: 'shared' } }],
      [{ state: 'completed', value: { echo: 'shared' } }],
    ]);
  });

  it('rejects with the add error when the jobs could not be added, and with QueueClosedError on close', async () => {
    await expect(
      completions.waitFor(['d-1'], NEVER_MS, async () => {
        throw new Error('Redis is down');
      }),
    ).rejects.toThrow('Redis is down');

    const waiting = completions.waitFor(
      ['d-hold'],
      NEVER_MS,
      add([{ id: 'd-hold', data: { mode: 'hold' } }]),
    );
    await expect.poll(() => queue.getJobState('d-hold'), { timeout: 10_000 }).toBe('active');
    completions.close();
    await expect(waiting).rejects.toBeInstanceOf(QueueClosedError);
  });
});
