import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  deliveryStatus,
  enqueueDelivery,
  handOverPending,
  MAX_BODY_BYTES,
  redeliver,
  verifySignature,
  type DeliveryRequest,
} from '../../shared/delivery/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { deliveryJobId } from '../../shared/queues/deliveries.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createLogger } from '../../shared/logger.js';
import { attemptLog, countDeliveries, deliveryRow, settled } from './helpers.js';
import { startReceiver, type Answer, type Receiver } from './receiver.js';

// Deliveries through a real worker (in this process) to real HTTP receivers on loopback, which the guard lets
// through only because WEBHOOK_ALLOW_PRIVATE is set. Every other setting is the default (10 s per attempt).
// Retries use a short schedule passed with the delivery; the production schedules are covered at the end.

const SECRET = 'whsec_test_0123456789';
const FAST = { attempts: 5, backoffMs: 50 };

describe('outbound deliveries', () => {
  let runtime: TestRuntime;
  let pool: WorkerPool;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    runtime = await createTestRuntime({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    pool = await startWorkerPool(runtime, ['deliveries']);
  });
  afterAll(async () => {
    await pool?.close(1000);
    await Promise.all(receivers.map((r) => r.close()));
    await runtime?.close();
  });

  const receiver = async (answer?: (index: number) => Answer) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };
  const request = (url: string, extra: Partial<DeliveryRequest> = {}): DeliveryRequest => ({
    url,
    secret: SECRET,
    event: 'list.completed',
    body: { list_id: 7, note: 'héllo <b>"x"</b>' },
    subject: `list:${randomUUID()}`,
    ...extra,
  });

  it('POSTs the JSON body once, signed, with its delivery id, event and attempt', async () => {
    const r = await receiver();
    const req = request(r.url('/hooks/agora?x=1'), { requestId: 'req-42' });
    const id = await enqueueDelivery(runtime, req);
    const row = await settled(runtime.database, runtime.queues, id);

    expect(row).toMatchObject({ state: 'delivered', attempts: 1, last_status: 200 });
    expect(r.received).toHaveLength(1);
    const [got] = r.received;
    expect(got!.path).toBe('/hooks/agora?x=1');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-agora-event']).toBe('list.completed');
    expect(got!.headers['x-agora-delivery']).toBe(id);
    expect(got!.headers['x-agora-attempt']).toBe('1');
    expect(JSON.parse(got!.body)).toEqual(req.body);

    const signature = got!.headers['x-agora-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, got!.body, signature)).toBe(true);
    expect(verifySignature('whsec_other', got!.body, signature)).toBe(false);
    expect(verifySignature(SECRET, got!.body.replace('7', '8'), signature)).toBe(false);
    // Too old for the default five-minute window.
    expect(verifySignature(SECRET, got!.body, signature, { now: Math.floor(Date.now() / 1000) + 301 })).toBe(
      false,
    );

    const status = await deliveryStatus(runtime.database, req.subject);
    expect(status).toEqual({ attempts: 1, last_status: 200, delivered_at: expect.any(String) });
    expect(new Date(status!.delivered_at!).toISOString()).toBe(status!.delivered_at);
    const job = await runtime.queues.queue('deliveries').getJob(deliveryJobId(id, 0));
    expect(await job!.getState()).toBe('completed');
    // The job carries the delivery's id and the request id, nothing of the URL, secret or body.
    expect(job!.data).toEqual({ deliveryId: id, round: 0, requestId: 'req-42' });
  });

  it('retries 5xx, 429 and 408 on the schedule given, as one delivery under one id, until a 2xx', async () => {
    const statuses = [503, 429, 408, 200];
    const r = await receiver((i) => ({ status: statuses[i] ?? 200 }));
    const req = request(r.url(), { schedule: FAST });
    const id = await enqueueDelivery(runtime, req);
    const row = await settled(runtime.database, runtime.queues, id);

    expect(row).toMatchObject({ state: 'delivered', attempts: 4, last_status: 200 });
    expect(r.received.map((x) => x.headers['x-agora-delivery'])).toEqual([id, id, id, id]);
    expect(r.received.map((x) => x.headers['x-agora-attempt'])).toEqual(['1', '2', '3', '4']);
    for (const x of r.received) {
      expect(x.body).toBe(r.received[0]!.body);
      expect(verifySignature(SECRET, x.body, x.headers['x-agora-signature'] as string)).toBe(true);
    }
    expect((await attemptLog(runtime.database, id)).map((a) => [a.attempt, a.status, a.finished])).toEqual([
      [1, 503, true],
      [2, 429, true],
      [3, 408, true],
      [4, 200, true],
    ]);
    expect(await countDeliveries(runtime.database, req.subject)).toBe(1);
  });

  it('gives up after the last attempt of its schedule', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const req = request(r.url(), { schedule: { attempts: 3, backoffMs: 50 } });
    const id = await enqueueDelivery(runtime, req);
    const row = await settled(runtime.database, runtime.queues, id);

    expect(row).toMatchObject({ state: 'failed', attempts: 3, last_status: 500, last_error: 'HTTP 500' });
    expect(r.received).toHaveLength(3);
    const job = await runtime.queues.queue('deliveries').getJob(deliveryJobId(id, 0));
    expect(await job!.getState()).toBe('failed');
    expect(job!.attemptsMade).toBe(3);
    expect(await deliveryStatus(runtime.database, req.subject)).toEqual({
      attempts: 3,
      last_status: 500,
      delivered_at: null,
    });
  });

  it.each([400, 401, 404, 410, 422])(
    'stops at a %i: the receiver will not take it, however often it is sent',
    async (code) => {
      const r = await receiver(() => ({ status: code }));
      const id = await enqueueDelivery(runtime, request(r.url(), { schedule: FAST }));
      const row = await settled(runtime.database, runtime.queues, id);

      expect(row).toMatchObject({ state: 'failed', attempts: 1, last_status: code });
      expect(r.received).toHaveLength(1);
      // Failed for good, not waiting for a retry.
      const job = await runtime.queues.queue('deliveries').getJob(deliveryJobId(id, 0));
      expect(await job!.getState()).toBe('failed');
      expect(job!.attemptsMade).toBe(1);
    },
  );

  it('does not follow a redirect', async () => {
    const elsewhere = await receiver();
    const r = await receiver(() => ({ status: 307, headers: { location: elsewhere.url('/stolen') } }));
    const id = await enqueueDelivery(runtime, request(r.url(), { schedule: FAST }));
    const row = await settled(runtime.database, runtime.queues, id);

    expect(row).toMatchObject({ state: 'failed', attempts: 1, last_status: 307 });
    expect(r.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('redelivers an ended delivery under the same id, and refuses while it is still being tried', async () => {
    let answer: Answer = { status: 404 };
    const r = await receiver(() => answer);
    const req = request(r.url(), { schedule: FAST });
    const id = await enqueueDelivery(runtime, req);
    expect((await settled(runtime.database, runtime.queues, id)).state).toBe('failed');

    answer = { status: 204 };
    expect(await redeliver(runtime, id)).toBe(id);
    const row = await settled(runtime.database, runtime.queues, id, 1);
    expect(row).toMatchObject({ state: 'delivered', attempts: 2, last_status: 204 });
    expect(r.received.map((x) => x.headers['x-agora-delivery'])).toEqual([id, id]);
    expect(r.received.map((x) => x.headers['x-agora-attempt'])).toEqual(['1', '2']);
    expect(await countDeliveries(runtime.database, req.subject)).toBe(1);

    // A delivery waiting for its retry (an hour away) is still being tried.
    const failing = await receiver(() => ({ status: 500 }));
    const waiting = await enqueueDelivery(
      runtime,
      request(failing.url(), { schedule: { attempts: 2, backoffMs: 3_600_000 } }),
    );
    await failing.waitForRequests(1);
    await expect(redeliver(runtime, waiting)).rejects.toThrow(ConflictError);

    await expect(redeliver(runtime, randomUUID())).rejects.toThrow(NotFoundError);
    await expect(redeliver(runtime, "1' OR 1=1 --")).rejects.toThrow(NotFoundError);
  });

  it('refuses a request that could never be delivered, and stores nothing for it', async () => {
    const subject = `list:${randomUUID()}`;
    const bad: Partial<DeliveryRequest>[] = [
      { url: 'ftp://example.com/x' },
      { url: 'not a url' },
      { url: `https://example.com/${'a'.repeat(2100)}` },
      { url: 'https://user:pass@example.com/' },
      { secret: '' },
      { event: 'list.completed\r\nX-Evil: 1' },
      { event: '' },
      { subject: '' },
      { body: undefined },
      { body: { big: 'x'.repeat(MAX_BODY_BYTES) } },
      { schedule: { attempts: 0, backoffMs: 10 } },
      { schedule: { attempts: 3, backoffMs: -1 } },
    ];
    for (const change of bad) {
      const attempt = enqueueDelivery(runtime, {
        ...request('https://example.com/hook'),
        subject,
        ...change,
      });
      await expect(attempt, JSON.stringify(change).slice(0, 80)).rejects.toThrow(ValidationError);
    }
    expect(await countDeliveries(runtime.database, subject)).toBe(0);
  });

  it('reports the latest delivery of a subject, and null for a subject without one', async () => {
    const r = await receiver((i) => ({ status: i === 0 ? 200 : 503 }));
    const subject = `list:${randomUUID()}`;
    const first = await enqueueDelivery(runtime, request(r.url(), { subject }));
    await settled(runtime.database, runtime.queues, first);
    const second = await enqueueDelivery(
      runtime,
      request(r.url(), { subject, schedule: { attempts: 1, backoffMs: 0 } }),
    );
    await settled(runtime.database, runtime.queues, second);

    expect(await deliveryStatus(runtime.database, subject)).toEqual({
      attempts: 1,
      last_status: 503,
      delivered_at: null,
    });
    expect(await deliveryStatus(runtime.database, `list:${randomUUID()}`)).toBeNull();
  });

  it('hands over again a pending delivery whose job was lost, once its next attempt is long overdue', async () => {
    const r = await receiver((i) => (i === 0 ? { status: 503 } : { status: 204 }));
    // The second attempt would come an hour after the first.
    const id = await enqueueDelivery(
      runtime,
      request(r.url('/lost'), { schedule: { attempts: 3, backoffMs: 3_600_000 } }),
    );
    await vi.waitFor(
      async () => expect(await deliveryRow(runtime.database, id)).toMatchObject({ attempts: 1 }),
      {
        timeout: 20_000,
      },
    );
    const job = await runtime.queues.queue('deliveries').getJob(deliveryJobId(id, 0));
    await vi.waitFor(async () => expect(await job!.getState()).toBe('delayed'), { timeout: 20_000 });
    const handOverAgain = () =>
      handOverPending({ database: runtime.database, queues: runtime.queues, logger: createLogger('silent') });
    // Not overdue yet: the job is left alone.
    await handOverAgain();
    expect(await (await runtime.queues.queue('deliveries').getJob(deliveryJobId(id, 0)))!.getState()).toBe(
      'delayed',
    );

    // Redis loses the job (a restart without its data); three hours go by.
    await job!.remove();
    await runtime.database.query(
      sql`UPDATE delivery_attempts SET started_at = started_at - interval '3 hours' WHERE delivery_id = ${id}`,
    );
    await runtime.database.query(
      sql`UPDATE deliveries SET enqueued_at = enqueued_at - interval '3 hours' WHERE id = ${id}`,
    );
    await handOverAgain();
    const row = await settled(runtime.database, runtime.queues, id);
    expect(row).toMatchObject({ state: 'delivered', attempts: 2, last_status: 204 });
    expect(r.received).toHaveLength(2);
  });
});
