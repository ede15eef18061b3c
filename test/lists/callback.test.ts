import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { SIGNATURE_HEADER, verifySignature } from '../../shared/delivery/index.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { get, jsonList, startListWorld, waitForStatus, type VerifyApp } from './helpers.js';

/**
 * A list's callback end to end: the list is verified by a worker, its end is handed to the deliveries queue, and
 * a real HTTP receiver on loopback gets `{event, data: List}` signed with the key's webhook secret, once.
 */
let world: Awaited<ReturnType<typeof startListWorld>>;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;
let receiver: http.Server;
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  world = await startListWorld();
  runtime = await createTestRuntime(
    worldEnv(world.dns.endpoint, world.world.port, {
      RATE_LIMIT_ENABLED: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    }),
  );
  pool = await startWorkerPool(runtime, ['verify-lists', 'deliveries']);
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await app?.close();
  await world?.close();
  await pool?.close(5000);
  await runtime?.close();
  receiver?.close();
});

describe('the callback of a list', () => {
  it('is POSTed once, signed with the key webhook secret, and shown as delivered', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/lists`;
    const created = await jsonList(app, key, {
      emails: ['alice@example.test', 'nobody@example.test'],
      callback_url: url,
    });
    expect(created.statusCode).toBe(202);
    const id = created.json().data.id as string;
    expect(created.json().data.callback).toEqual({ attempts: 0, last_status: null, delivered_at: null });

    await waitForStatus(app, key, id, ['completed']);
    const delivered = await waitFor(async () => {
      const list = (await get(app, key, `/lists/${id}`)).json().data;
      return list.callback.delivered_at ? list : undefined;
    });
    expect(delivered.callback).toMatchObject({ attempts: 1, last_status: 204 });

    expect(received).toHaveLength(1);
    const [{ headers, body }] = received as [(typeof received)[0]];
    const [row] = await runtime.database.query<{ secret: string }>(
      sql`SELECT k.webhook_secret AS secret FROM verification_lists l JOIN api_keys k ON k.id = l.key_id WHERE l.id = ${id}`,
    );
    expect(verifySignature(row!.secret, body, String(headers[SIGNATURE_HEADER.toLowerCase()]))).toBe(true);
    expect(verifySignature('whsec_someone_else', body, String(headers[SIGNATURE_HEADER.toLowerCase()]))).toBe(
      false,
    );
    const payload = JSON.parse(body);
    expect(payload.event).toBe('list.completed');
    expect(payload.data).toMatchObject({
      id,
      status: 'completed',
      total: 2,
      processed: 2,
      callback_url: url,
    });
  });
});

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('timed out waiting for the callback');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
