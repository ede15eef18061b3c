import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueDelivery, verifySignature } from '../../shared/delivery/index.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { attemptLog, countDeliveries, settled } from './helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * A receiver holding its first `held` requests open for ever (the worker is surely mid-attempt when it is killed) and
 * answering the rest at once, a runtime whose attempt timeout outlasts the test (a held attempt cannot end by itself
 * before the kill however long the next worker takes to boot), and deliveries workers as child processes.
 */
function killWorld(held: number) {
  const world = { runtime: undefined as unknown as TestRuntime, receiver: undefined as unknown as Receiver };
  const workers: RunningProcess[] = [];
  beforeAll(async () => {
    world.receiver = await startReceiver((i) => (i < held ? 'hang' : { status: 200 }));
    world.runtime = await createTestRuntime({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WORKER_LOCK_MS: '2000',
      WEBHOOK_TIMEOUT_MS: '120000',
    });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await world.receiver?.close();
    await world.runtime?.close();
  });
  const startWorker = async () => {
    const worker = startProcess('workers/main.ts', ['--queues', 'deliveries'], world.runtime.env);
    workers.push(worker);
    await worker.waitFor(/workers started/, 60_000);
    return worker;
  };
  return { world, startWorker };
}

// A worker killed in the middle of an attempt: its job's lock expires, another worker process takes the job over
// (BullMQ stalled-job recovery) and sends the same delivery again, under the same id, as the same single row.

describe('a deliveries worker killed mid-attempt', () => {
  const { world, startWorker } = killWorld(1);

  it('is replaced by another worker, which delivers the same delivery once more', async () => {
    const first = await startWorker();
    const subject = `list:${randomUUID()}`;
    const id = await enqueueDelivery(world.runtime, {
      url: world.receiver.url(),
      secret: 'whsec_kill',
      event: 'list.completed',
      body: { list_id: 1 },
      subject,
    });
    await world.receiver.waitForRequests(1);
    // The second worker is up before the first dies; the job stays locked by the first (it renews its lock).
    await startWorker();
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const row = await settled(world.runtime.database, world.runtime.queues, id, 0, 60_000);
    expect(row).toMatchObject({ state: 'delivered', attempts: 2, last_status: 200 });
    expect(await countDeliveries(world.runtime.database, subject)).toBe(1);
    expect(world.receiver.received).toHaveLength(2);
    expect(world.receiver.received.map((r) => r.headers['x-agora-delivery'])).toEqual([id, id]);
    expect(world.receiver.received[1]!.body).toBe(world.receiver.received[0]!.body);
    expect(
      verifySignature(
        'whsec_kill',
        world.receiver.received[1]!.body,
        world.receiver.received[1]!.headers['x-agora-signature'] as string,
      ),
    ).toBe(true);
    // The attempt cut short by the kill stays in the log, unfinished.
    expect(
      (await attemptLog(world.runtime.database, id)).map((a) => [a.attempt, a.status, a.finished]),
    ).toEqual([
      [1, null, false],
      [2, 200, true],
    ]);
  }, 180_000);
});

// BullMQ fails a job found stalled more than `maxStalledCount` times without running it: at its default (1) a
// delivery whose worker was killed twice ended for good, its row left pending for ever.
describe('a delivery whose workers are killed twice', () => {
  const { world, startWorker } = killWorld(2);
  const kill = async (worker: RunningProcess) => {
    worker.child.kill('SIGKILL');
    await worker.exited;
  };

  it('is still delivered by a third worker, once, under its id', async () => {
    const first = await startWorker();
    const subject = `list:${randomUUID()}`;
    const id = await enqueueDelivery(world.runtime, {
      url: world.receiver.url(),
      secret: 'whsec_kill',
      event: 'list.completed',
      body: { list_id: 2 },
      subject,
    });
    await world.receiver.waitForRequests(1);
    const second = await startWorker();
    await kill(first);
    await world.receiver.waitForRequests(2);
    await startWorker();
    await kill(second);

    const row = await settled(world.runtime.database, world.runtime.queues, id, 0, 90_000);
    expect(row).toMatchObject({ state: 'delivered', attempts: 3, last_status: 200 });
    expect(await countDeliveries(world.runtime.database, subject)).toBe(1);
    expect(world.receiver.received.map((r) => r.headers['x-agora-delivery'])).toEqual([id, id, id]);
  }, 240_000);
});
