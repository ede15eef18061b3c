import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../shared/queues/producer.js';
import { connectRedis } from '../../shared/redis.js';
import { REDIS_URL } from '../support/postgres.js';
import { deleteKeys } from '../support/runtime.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

// A Redis that answers slowly just after a producer connects (a loaded machine, a failover): the real Redis behind
// a loopback proxy that, on the first command a connection sends after ioredis's ready check (INFO), holds Redis's
// replies for longer than the producers' command timeout, once, then lets everything through. Requests made during the stall may fail; the queues must
// work once Redis answers again. BullMQ keeps its version check's promise: had the check timed out, every later call
// on the queue failed for the life of the process.

const STALL_MS = 6_500; // past the producers' 5 s command timeout
const INFO = /\r\ninfo\r\n/i;

async function stallingProxy(
  target: URL,
): Promise<{ port: number; stalled: () => boolean; close: () => Promise<void> }> {
  let stalled = false;
  const proxy = await startTcpProxy(target, () => {
    let ready = false;
    let held: Buffer[] | undefined;
    let deliver: (chunk: Buffer) => void = () => {};
    return {
      fromClient(chunk, toUpstream) {
        if (!ready) ready = INFO.test(chunk.toString('latin1'));
        else if (!stalled) {
          stalled = true;
          held = [];
          setTimeout(() => {
            const release = held ?? [];
            held = undefined;
            for (const c of release) deliver(c);
          }, STALL_MS).unref();
        }
        toUpstream(chunk);
      },
      fromUpstream(chunk, toClient) {
        deliver = toClient;
        if (held) held.push(chunk);
        else toClient(chunk);
      },
    };
  });
  return { ...proxy, stalled: () => stalled };
}

describe('producers after a slow start of Redis', { timeout: 60_000 }, () => {
  const prefix = `{agora-test-slow-start-${randomBytes(4).toString('hex')}}`;
  const cleanups: (() => Promise<unknown>)[] = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it('enqueue works once Redis answers again', async () => {
    const proxy = await stallingProxy(new URL(REDIS_URL));
    cleanups.push(proxy.close);
    const connection = connectRedis(`redis://127.0.0.1:${proxy.port}`, 'producer');
    connection.on('error', () => {});
    cleanups.push(async () => connection.disconnect());
    const direct = connectRedis(REDIS_URL, 'producer');
    cleanups.push(async () => {
      await deleteKeys(`${prefix}*`);
      direct.disconnect();
    });
    await new Promise<void>((resolve) => connection.once('ready', () => resolve()));
    const queues = createQueues(connection, prefix);
    cleanups.push(() => queues.close());

    // During the stall: this may time out (a 503 for the request that made it), nothing more.
    const stalledAt = Date.now();
    await queues.enqueue('ping', 'echo', { message: 'during the stall' }).catch(() => undefined);
    expect(proxy.stalled()).toBe(true);
    await sleep(Math.max(0, stalledAt + STALL_MS + 500 - Date.now()));

    const job = await queues.enqueue('ping', 'echo', { message: 'after the stall' });
    expect(job.id).toBeTruthy();
    expect(await direct.exists(`${prefix}:ping:${job.id}`)).toBe(1);
  });
});
