import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { connectRedis, type Redis } from '../../shared/redis.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { freePort } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';
import { expectRefused, limitHeaders } from './helpers.js';

const until = async (condition: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(25);
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
};

describe('rate limits while Redis is unavailable', () => {
  let runtime: TestRuntime;
  let port: number;
  let server: ChildProcess;
  let redis: Redis;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime({
      RATE_LIMIT_ANONYMOUS_HOURLY: '4',
      RATE_LIMIT_ANONYMOUS_DAILY: '100',
    });
    port = await freePort();
    server = await startRedis(port);
    redis = connectRedis(`redis://127.0.0.1:${port}`, 'producer');
    redis.on('error', () => {});
    app = await buildQaApp({ ...runtime, redis });
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
    server.kill('SIGKILL');
    await runtime.close();
  });

  it('counts in Redis while it answers, in process memory while it is down, and in Redis again once it is back', async () => {
    const get = (ip: string) => app.inject({ url: '/api/categories', remoteAddress: ip });
    const hourKey = (ip: string) => `${runtime.config.queuePrefix}:ratelimit:qa:anonymous:hour:ip:${ip}`;
    expect(limitHeaders(await get('10.3.0.1')).remaining).toBe(3);
    expect(await redis.get(hourKey('10.3.0.1'))).toBe('1');

    server.kill('SIGKILL');
    await until(() => redis.status !== 'ready', 'the connection to drop');

    // Reads go on; limits still apply, per process, from memory (a fresh count for this process).
    for (const remaining of [3, 2, 1, 0]) {
      const res = await get('10.3.0.1');
      expect(res.statusCode).toBe(200);
      expect(res.json().success).toBe(true);
      expect(limitHeaders(res)).toMatchObject({ limit: 4, remaining });
    }
    expectRefused(await get('10.3.0.1'), 4);
    // The Q&A service serves without Redis: it stays in rotation, and readiness tells the operator what is wrong.
    const ready = await app.inject('/ready');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'degraded',
      dependencies: { postgres: 'ok', redis: 'unavailable' },
      search_index: 'gin',
    });

    server = await startRedis(port);
    await until(() => redis.status === 'ready', 'the connection to come back');
    // The limiter counts on a connection of its own (duplicated from this one), which reconnects on its own
    // schedule: until it is back too, a request is still counted in memory. Probe addresses show when it is.
    for (let probe = 1; ; probe++) {
      expect(probe, "the limiter's connection to come back").toBeLessThan(200);
      await get(`10.3.1.${probe}`);
      if ((await redis.get(hourKey(`10.3.1.${probe}`))) === '1') break;
      await sleep(25);
    }
    const back = await get('10.3.0.2');
    expect(limitHeaders(back).remaining).toBe(3);
    expect(await redis.get(hourKey('10.3.0.2'))).toBe('1');
  });

  it('starts and serves with limits when Redis never answered (a closed port)', async () => {
    const closed = connectRedis(`redis://127.0.0.1:${await freePort()}`, 'producer');
    closed.on('error', () => {});
    const orphan = await buildQaApp({ ...runtime, redis: closed });
    try {
      for (const remaining of [3, 2, 1, 0]) {
        const res = await orphan.inject({ url: '/api/categories', remoteAddress: '10.3.0.3' });
        expect(res.statusCode).toBe(200);
        expect(limitHeaders(res)).toMatchObject({ limit: 4, remaining });
      }
      expectRefused(await orphan.inject({ url: '/api/categories', remoteAddress: '10.3.0.3' }), 4);
    } finally {
      await orphan.close();
      closed.disconnect();
    }
  });
});
