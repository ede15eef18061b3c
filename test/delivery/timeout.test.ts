import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { enqueueDelivery } from '../../shared/delivery/index.js';
import { sendOnce } from '../../shared/delivery/send.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { attemptLog, settled } from './helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

// A receiver that never answers costs one attempt of WEBHOOK_TIMEOUT_MS (10 s by default), then a retry. The
// worker here runs with a 300 ms timeout so that the test does not wait 10 s per attempt.

describe('the timeout of a delivery attempt', () => {
  let runtime: TestRuntime;
  let pool: WorkerPool;
  let silent: Receiver;

  beforeAll(async () => {
    runtime = await createTestRuntime({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '300' });
    pool = await startWorkerPool(runtime, ['deliveries']);
    silent = await startReceiver(() => 'hang');
  });
  afterAll(async () => {
    await pool?.close(1000);
    await silent?.close();
    await runtime?.close();
  });

  it('is 10 s unless configured, and WEBHOOK_ALLOW_PRIVATE is off by default', () => {
    expect(loadConfig({}).webhook).toMatchObject({ timeoutMs: 10_000, allowPrivate: false });
    expect(loadConfig({ WEBHOOK_TIMEOUT_MS: '2500', WEBHOOK_ALLOW_PRIVATE: 'true' }).webhook).toMatchObject({
      timeoutMs: 2500,
      allowPrivate: true,
    });
    const bad = () => loadConfig({ WEBHOOK_TIMEOUT_MS: '0', WEBHOOK_ALLOW_PRIVATE: 'maybe' });
    expect(bad).toThrow(/WEBHOOK_TIMEOUT_MS="0"/);
    expect(bad).toThrow(/WEBHOOK_ALLOW_PRIVATE="maybe"/);
  });

  it('ends an attempt that gets no answer, and the delivery is retried', async () => {
    const id = await enqueueDelivery(runtime, {
      url: silent.url(),
      secret: 'whsec_x',
      event: 'list.completed',
      body: { ok: true },
      subject: `list:${randomUUID()}`,
      schedule: { attempts: 2, backoffMs: 50 },
    });
    const row = await settled(runtime.database, runtime.queues, id);
    expect(row).toMatchObject({
      state: 'failed',
      attempts: 2,
      last_status: null,
      last_error: 'no response within 300 ms',
    });
    expect(silent.received).toHaveLength(2);
    expect(
      (await attemptLog(runtime.database, id)).map((a) => [a.attempt, a.status, a.error, a.finished]),
    ).toEqual([
      [1, null, 'no response within 300 ms', true],
      [2, null, 'no response within 300 ms', true],
    ]);
  });

  it('bounds one attempt by the timeout it is given', async () => {
    const result = await sendOnce(silent.url(), {}, '{}', { timeoutMs: 200, allowPrivate: true });
    expect(result).toEqual({ error: 'no response within 200 ms' });
  });

  it('bounds a response head that trickles in, and never reads an endless body', async () => {
    // A raw socket server: node:http cannot trickle a status line or keep a body going for ever.
    let bodyChunks = 0;
    const server = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', (request) => {
        if (request.toString().startsWith('POST /trickle ')) {
          socket.write('HTTP/1.1 200 OK\r\n');
          const drip = setInterval(() => socket.write('x'), 20);
          socket.on('close', () => clearInterval(drip));
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n');
        const chunk = Buffer.alloc(64 * 1024, 'a');
        // Written only as fast as the client reads, so the count is what the client took in.
        const more = () => {
          while (!socket.destroyed) {
            bodyChunks++;
            if (!socket.write(chunk)) return void socket.once('drain', more);
          }
        };
        more();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      const options = { timeoutMs: 300, allowPrivate: true };
      expect(await sendOnce(`${base}/trickle`, {}, '{}', options)).toEqual({
        error: 'no response within 300 ms',
      });
      expect(await sendOnce(`${base}/endless`, {}, '{}', { ...options, timeoutMs: 20_000 })).toEqual({
        status: 200,
      });
      // The status is all a delivery needs: the connection is closed at the head, not after 20 s of body.
      expect(bodyChunks).toBeLessThan(1024);
    } finally {
      server.close();
    }
  });
});
