import { randomBytes } from 'node:crypto';
import { Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../shared/queues/producer.js';
import { connectRedis } from '../../shared/redis.js';
import { REDIS_URL } from '../support/postgres.js';
import { deleteKeys } from '../support/runtime.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

// The first job a producer waits for on a queue, finished by a quick worker before the producer's QueueEvents has
// sent its first XREAD: on a loaded machine the SETNAME round trip BullMQ makes first can take that long. The real
// Redis sits behind a loopback proxy that holds back, for a while, what the QueueEvents connection sends from its
// SETNAME on (so its XREAD reaches Redis after the job has ended); the worker talks to Redis directly.

const HOLD_MS = 1_500;

async function setnameHoldingProxy(target: URL, marker: string) {
  let held = 0;
  const proxy = await startTcpProxy(target, () => {
    let queue: Buffer[] | undefined;
    return {
      fromClient(chunk, toUpstream) {
        const text = chunk.toString('latin1');
        if (!queue && /setname/i.test(text) && text.includes(marker)) {
          held++;
          queue = [];
          setTimeout(() => {
            for (const c of queue ?? []) toUpstream(c);
            queue = undefined;
          }, HOLD_MS).unref();
        }
        if (queue) queue.push(chunk);
        else toUpstream(chunk);
      },
    };
  });
  return { ...proxy, held: () => held };
}

describe('the first job waited for on a queue', { timeout: 30_000 }, () => {
  const prefix = `{agora-test-first-${randomBytes(4).toString('hex')}}`;
  const cleanups: (() => Promise<unknown>)[] = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await deleteKeys(`${prefix}*`);
  });

  it('is seen even when it ends before the listener has started reading', async () => {
    const worker = new Worker(
      'ping',
      async (job) => ({ message: job.data.message, worker: process.pid, attempt: 1 }),
      {
        connection: { url: REDIS_URL },
        prefix,
      },
    );
    cleanups.push(() => worker.close());
    await worker.waitUntilReady();

    const proxy = await setnameHoldingProxy(new URL(REDIS_URL), prefix);
    cleanups.push(proxy.close);
    const connection = connectRedis(`redis://127.0.0.1:${proxy.port}`, 'producer');
    connection.on('error', () => {});
    cleanups.push(async () => connection.disconnect());
    const queues = createQueues(connection, prefix);
    cleanups.push(() => queues.close());

    const value = await queues.enqueueAndWait('ping', 'echo', { message: 'first' }, 10_000);
    expect(value).toEqual({ message: 'first', worker: process.pid, attempt: 1 });
    // The listener's start was held, so the job ended before it read anything.
    expect(proxy.held()).toBe(1);
  });
});
