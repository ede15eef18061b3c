import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { handOver } from '../../shared/delivery/index.js';
import { createListBudget } from '../../shared/lists/budget.js';
import { endList } from '../../shared/lists/end.js';
import { sweepLists } from '../../shared/lists/sweep.js';
import type { Queues } from '../../shared/queues/producer.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { get, jsonList, type VerifyApp } from './helpers.js';

/**
 * The callback outbox: a list's end and its callback's delivery commit together; the hand-over to the deliveries
 * queue comes after. Here that hand-over fails (Redis refusing the deliveries queue, as a process dying right after
 * the commit would leave it): the sweeper hands the delivery on, a real receiver gets exactly one callback, and
 * handing the same delivery over again sends nothing more.
 */
let runtime: TestRuntime;
let pool: WorkerPool | undefined;
let app: VerifyApp;
let key: string;
let receiver: http.Server;
const received: string[] = [];

beforeAll(async () => {
  runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await app?.close();
  await pool?.close(5000);
  await runtime?.close();
  receiver?.close();
});

/** The runtime's queues, except that nothing can be added to the deliveries queue. */
const withoutDeliveries = (queues: Queues): Queues =>
  new Proxy(queues, {
    get(target, property, receiverObject) {
      if (property !== 'enqueue') return Reflect.get(target, property, receiverObject);
      return (queue: string, ...rest: unknown[]) =>
        queue === 'deliveries'
          ? Promise.reject(new Error('the deliveries queue is unreachable'))
          : (target.enqueue as (...args: unknown[]) => Promise<unknown>)(queue, ...rest);
    },
  });

describe('the callback outbox', () => {
  it('commits the delivery with the end; the sweeper hands over what the crash left, delivered once', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/lists`;
    const created = await jsonList(app, key, {
      emails: ['a@example.test', 'b@example.test'],
      callback_url: url,
    });
    expect(created.statusCode).toBe(202);
    const id = created.json().data.id as string;

    const ended = await endList(
      {
        database: runtime.database,
        queues: withoutDeliveries(runtime.queues),
        budget: createListBudget(runtime.redis, runtime.config),
        logger: runtime.logger,
      },
      id,
      'cancelled',
    );
    expect(ended).toBe(true);
    const deliveries = await runtime.database.query<{ id: string; enqueued: boolean; event: string }>(
      sql`SELECT id, enqueued_at IS NOT NULL AS enqueued, event FROM deliveries WHERE subject = ${`list:${id}`}`,
    );
    expect(deliveries).toEqual([{ id: expect.any(String), enqueued: false, event: 'list.cancelled' }]);
    expect(await runtime.queues.queue('deliveries').getJobCounts('waiting', 'delayed', 'active')).toEqual({
      waiting: 0,
      delayed: 0,
      active: 0,
    });

    pool = await startWorkerPool(runtime, ['deliveries']);
    const sweep = () =>
      sweepLists({ database: runtime.database, queues: runtime.queues, logger: runtime.logger });
    let handed = 0;
    // The sweeper leaves a hand-over alone for OUTBOX_GRACE_MS (it may still be on its way); then it is its own.
    while (handed === 0) {
      handed = (await sweep()).callbacks;
      if (handed === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(handed).toBe(1);
    const delivered = await waitFor(async () => {
      const list = (await get(app, key, `/lists/${id}`)).json().data;
      return list.callback.delivered_at ? list : undefined;
    });
    expect(delivered.callback).toMatchObject({ attempts: 1, last_status: 204 });
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!)).toMatchObject({
      event: 'list.cancelled',
      data: { id, status: 'cancelled' },
    });

    // Handed over again (a hand-over whose mark was lost), swept again: nothing more is sent.
    await handOver({ database: runtime.database, queues: runtime.queues }, deliveries[0]!.id);
    expect((await sweep()).callbacks).toBe(0);
    await waitFor(async () => {
      const jobs = await runtime.queues.queue('deliveries').getJobCounts('waiting', 'delayed', 'active');
      return (jobs.waiting ?? 0) + (jobs.delayed ?? 0) + (jobs.active ?? 0) === 0 ? true : undefined;
    });
    expect(received).toHaveLength(1);
    const [log] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = ${deliveries[0]!.id}`,
    );
    expect(log!.n).toBe(1);
  });
});

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
