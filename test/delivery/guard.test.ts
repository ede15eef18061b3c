import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendOnce } from '../../shared/delivery/send.js';
import { checkCallbackUrl, enqueueDelivery, type Resolve } from '../../shared/delivery/index.js';
import { ValidationError } from '../../shared/errors.js';
import { deliveryJobId } from '../../shared/queues/deliveries.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { attemptLog, settled } from './helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

// The private-address guard of callbacks and webhooks: at registration (checkCallbackUrl) and on every attempt,
// on the address the socket is opened to. This runtime has the default, WEBHOOK_ALLOW_PRIVATE unset.

const PUBLIC = '93.184.216.34';
const names =
  (table: Record<string, string[]>): Resolve =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

describe('the delivery address guard', () => {
  let runtime: TestRuntime;
  let pool: WorkerPool;
  let receiver: Receiver;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    pool = await startWorkerPool(runtime, ['deliveries']);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await pool?.close(1000);
    await receiver?.close();
    await runtime?.close();
  });

  it('is on by default', () => {
    expect(runtime.config.webhook.allowPrivate).toBe(false);
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.1.2.3/',
    'https://192.168.1.1/',
    'http://0.0.0.0/',
    'http://2130706433/', // 127.0.0.1 as one decimal number: URL normalises it
  ])('refuses %s at registration', async (url) => {
    const check = checkCallbackUrl(url, { allowPrivate: false });
    await expect(check).rejects.toThrow(ValidationError);
    await expect(check).rejects.toThrow(/loopback, private or reserved/);
  });

  it('refuses a name any of whose addresses is private, and one that does not resolve', async () => {
    const resolve = names({ 'hooks.example': [PUBLIC], 'mixed.example': [PUBLIC, '10.0.0.7'] });
    await expect(
      checkCallbackUrl('https://hooks.example/agora', { allowPrivate: false, resolve }),
    ).resolves.toBeUndefined();
    await expect(
      checkCallbackUrl('https://mixed.example/agora', { allowPrivate: false, resolve }),
    ).rejects.toThrow(/private or reserved/);
    await expect(
      checkCallbackUrl('https://nowhere.example/', { allowPrivate: false, resolve }),
    ).rejects.toThrow(/does not resolve/);
  });

  it('refuses what is not an http(s) URL of reasonable length, whatever the setting', async () => {
    for (const url of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'example.com/hook',
      '',
      `https://example.com/${'a'.repeat(2048)}`,
      'https://u:p@example.com/',
    ]) {
      for (const allowPrivate of [false, true]) {
        const error = await checkCallbackUrl(url, { allowPrivate }).catch((e: unknown) => e);
        expect(error, url).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).statusCode).toBe(400);
        expect((error as ValidationError).message).toMatch(/^Invalid callback URL: /);
      }
    }
  });

  it('lets private targets through with WEBHOOK_ALLOW_PRIVATE', async () => {
    await expect(checkCallbackUrl(receiver.url(), { allowPrivate: true })).resolves.toBeUndefined();
    await expect(checkCallbackUrl('http://localhost/hook', { allowPrivate: true })).resolves.toBeUndefined();
  });

  it('does not send a delivery to a private address, by IP or by name', async () => {
    for (const url of [receiver.url(), `http://localhost:${receiver.port}/hook`]) {
      const id = await enqueueDelivery(runtime, {
        url,
        secret: 'whsec_x',
        event: 'list.completed',
        body: { ok: true },
        subject: `list:${randomUUID()}`,
        schedule: { attempts: 5, backoffMs: 50 },
      });
      const row = await settled(runtime.database, runtime.queues, id);
      // Refused for good on the first attempt: no retry would find the address any better.
      expect(row).toMatchObject({ state: 'failed', attempts: 1, last_status: null });
      expect(row.last_error).toMatch(/loopback, private or reserved/);
      expect(await (await runtime.queues.queue('deliveries').getJob(deliveryJobId(id, 0)))!.getState()).toBe(
        'failed',
      );
      expect(await attemptLog(runtime.database, id)).toHaveLength(1);
    }
    expect(receiver.received).toHaveLength(0);
  });

  it('resolves a name once and connects to the address it checked, keeping the name as Host', async () => {
    // A rebinding name: public for the first lookup, private afterwards. Only one lookup is made, and the socket
    // goes to the address that lookup gave (here loopback, allowed for the sake of having a receiver).
    let lookups = 0;
    const rebinding: Resolve = async () => (++lookups === 1 ? ['127.0.0.1'] : ['10.9.9.9']);
    const result = await sendOnce(`http://receiver.test:${receiver.port}/named`, {}, '{}', {
      timeoutMs: 10_000,
      allowPrivate: true,
      resolve: rebinding,
    });
    expect(result).toEqual({ status: 200 });
    expect(lookups).toBe(1);
    expect(receiver.received.at(-1)).toMatchObject({
      path: '/named',
      headers: { host: `receiver.test:${receiver.port}` },
    });

    // An address that refuses the connection gives way to the next one (the receiver listens on 127.0.0.1 only).
    const count = receiver.received.length;
    const fallback = await sendOnce(`http://receiver.test:${receiver.port}/second`, {}, '{}', {
      timeoutMs: 10_000,
      allowPrivate: true,
      resolve: names({ 'receiver.test': ['127.0.0.2', '127.0.0.1'] }),
    });
    expect(fallback).toEqual({ status: 200 });
    expect(receiver.received.slice(count).map((r) => r.path)).toEqual(['/second']);

    // Without the allowance the same name, resolving to loopback, is not contacted at all.
    const before = receiver.received.length;
    const refused = await sendOnce(`http://receiver.test:${receiver.port}/named`, {}, '{}', {
      timeoutMs: 10_000,
      allowPrivate: false,
      resolve: names({ 'receiver.test': ['127.0.0.1'] }),
    });
    expect(refused).toMatchObject({ blocked: true });
    expect(receiver.received).toHaveLength(before);
  });
});
