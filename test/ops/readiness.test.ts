import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { connectRedis, type Redis } from '../../shared/redis.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * Readiness per role: the Q&A service stays ready (degraded) without Redis, the verification service does not;
 * both leave the rotation without PostgreSQL. The state of each dependency is in the body and in a metric.
 */

const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

const metricLine = (text: string, service: string, dependency: string) =>
  text
    .split('\n')
    .find((line) => line.startsWith(`agora_dependency_up{service="${service}",dependency="${dependency}"`));

describe('readiness per role', () => {
  let runtime: TestRuntime;
  let deadRedis: Redis;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    deadRedis = connectRedis(`redis://127.0.0.1:${await closedPort()}`, 'producer');
    deadRedis.on('error', () => {});
  });

  afterAll(async () => {
    deadRedis?.disconnect();
    await runtime?.close();
  });

  it('with every dependency up, each service is ready', async () => {
    for (const build of [buildQaApp, buildVerifyApp]) {
      const app = await build(runtime);
      try {
        const ready = await app.inject('/ready');
        expect(ready.statusCode).toBe(200);
        expect(ready.json()).toEqual({ status: 'ready', dependencies: { postgres: 'ok', redis: 'ok' } });
      } finally {
        await app.close();
      }
    }
  });

  it('without Redis the Q&A service stays ready but reports itself degraded, in the body and the metric', async () => {
    const app = await buildQaApp({ ...runtime, redis: deadRedis });
    try {
      const ready = await app.inject('/ready');
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({
        status: 'degraded',
        dependencies: { postgres: 'ok', redis: 'unavailable' },
      });
      const metrics = (await app.inject('/metrics')).body;
      expect(metricLine(metrics, 'qa', 'redis')).toBe(
        'agora_dependency_up{service="qa",dependency="redis",required="false"} 0',
      );
      expect(metricLine(metrics, 'qa', 'postgres')).toBe(
        'agora_dependency_up{service="qa",dependency="postgres",required="true"} 1',
      );
      // And it does serve reads meanwhile.
      expect((await app.inject('/api/categories')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('without Redis the verification service is not ready (every verification is a queued job)', async () => {
    const app = await buildVerifyApp({ ...runtime, redis: deadRedis });
    try {
      const ready = await app.inject('/ready');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({
        error: true,
        message: 'Not ready',
        code: 503,
        dependencies: { postgres: 'ok', redis: 'unavailable' },
      });
      const metrics = (await app.inject('/metrics')).body;
      expect(metricLine(metrics, 'verify', 'redis')).toBe(
        'agora_dependency_up{service="verify",dependency="redis",required="true"} 0',
      );
    } finally {
      await app.close();
    }
  });
});
