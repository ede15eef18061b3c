import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { connectRedis, type Redis } from '../../shared/redis.js';
import { freePort } from '../support/ports.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { startRedis } from '../support/redis-server.js';
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
        // The Q&A service also says which full-text index path search runs on (issue 22 item 4).
        expect(ready.json()).toEqual({
          status: 'ready',
          dependencies: { postgres: 'ok', redis: 'ok' },
          ...(build === buildQaApp ? { search_index: 'gin' } : {}),
        });
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
        search_index: 'gin',
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

  it("reports the search index's access method as the database has it, not as the migrations meant it", async () => {
    const app = await buildQaApp(runtime);
    const searchIndex = async () =>
      ((await app.inject('/ready')).json() as { search_index: unknown }).search_index;
    try {
      // GiST also indexes tsvector: the answer must follow the catalogue. No later test of this runtime searches.
      await runtime.database.query(sql`DROP INDEX questions_search_idx`);
      expect(await searchIndex()).toBe('gin');
      await runtime.database.query(
        sql`CREATE INDEX questions_search_gist ON questions USING gist (search_vector)`,
      );
      expect(await searchIndex()).toBe('gin,gist');
      await runtime.database.query(sql`DROP INDEX answers_search_idx`);
      expect(await searchIndex()).toBe('gist');
      await runtime.database.query(sql`DROP INDEX questions_search_gist`);
      expect(await searchIndex()).toBe('none');
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

/**
 * The same as an operator sees it: the Q&A and verification services as processes (`bin/start.ts --role …`) on a
 * redis-server of the test's own, which is stopped and started again under them.
 */
describe(
  'readiness per role, as processes, with Redis stopped and started again',
  { timeout: 240_000 },
  () => {
    let runtime: TestRuntime;
    let redisPort: number;
    let redisServer: ChildProcess;
    const roles: { service: 'qa' | 'verify'; base: string; child: RunningProcess }[] = [];

    const ready = async (base: string) => {
      const res = await fetch(`${base}/ready`, { signal: AbortSignal.timeout(10_000) });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const redisState = async (base: string) =>
      ((await ready(base)).body as { dependencies?: { redis?: string } }).dependencies?.redis;
    const until = async (what: string, condition: () => Promise<boolean>) => {
      for (let i = 0; i < 240; i++) {
        if (await condition()) return;
        await sleep(250);
      }
      throw new Error(`timed out waiting for ${what}`);
    };

    beforeAll(async () => {
      runtime = await createTestRuntime();
      redisPort = await freePort();
      redisServer = await startRedis(redisPort);
      for (const service of ['qa', 'verify'] as const) {
        const port = await freePort();
        const child = startProcess('bin/start.ts', ['--role', service], {
          ...runtime.env,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          HOST: '127.0.0.1',
          [service === 'qa' ? 'QA_PORT' : 'VERIFY_PORT']: String(port),
        });
        roles.push({ service, base: `http://127.0.0.1:${port}`, child });
      }
      await Promise.all(roles.map((r) => r.child.waitFor(/"msg":"ready"/, 180_000)));
    }, 240_000);

    afterAll(async () => {
      await Promise.all(roles.map((r) => r.child.stop('SIGTERM')));
      redisServer?.kill('SIGKILL');
      await runtime?.close();
    });

    it('the Q&A service stays in rotation (degraded), the verification service leaves it, both come back', async () => {
      const [qa, verify] = roles as [(typeof roles)[0], (typeof roles)[0]];
      for (const { base } of roles)
        expect(await ready(base)).toEqual({
          status: 200,
          body: {
            status: 'ready',
            dependencies: { postgres: 'ok', redis: 'ok' },
            ...(base === qa.base ? { search_index: 'gin' } : {}),
          },
        });

      redisServer.kill('SIGKILL');
      await until(
        'the Q&A service to see Redis gone',
        async () => (await redisState(qa.base)) === 'unavailable',
      );
      expect(await ready(qa.base)).toEqual({
        status: 200,
        body: {
          status: 'degraded',
          dependencies: { postgres: 'ok', redis: 'unavailable' },
          search_index: 'gin',
        },
      });
      const qaMetrics = await (
        await fetch(`${qa.base}/metrics`, { signal: AbortSignal.timeout(10_000) })
      ).text();
      expect(metricLine(qaMetrics, 'qa', 'redis')).toBe(
        'agora_dependency_up{service="qa",dependency="redis",required="false"} 0',
      );
      // It serves reads meanwhile.
      const read = await fetch(`${qa.base}/api/categories`, { signal: AbortSignal.timeout(10_000) });
      expect(read.status).toBe(200);
      expect(await ready(verify.base)).toEqual({
        status: 503,
        body: {
          error: true,
          message: 'Not ready',
          code: 503,
          dependencies: { postgres: 'ok', redis: 'unavailable' },
        },
      });
      const verifyMetrics = await (
        await fetch(`${verify.base}/metrics`, { signal: AbortSignal.timeout(10_000) })
      ).text();
      expect(metricLine(verifyMetrics, 'verify', 'redis')).toBe(
        'agora_dependency_up{service="verify",dependency="redis",required="true"} 0',
      );

      // Redis back on the same port: both are ready again by themselves.
      redisServer = await startRedis(redisPort);
      for (const { base } of roles)
        await until(`${base} to see Redis again`, async () => (await redisState(base)) === 'ok');
      for (const { base } of roles)
        expect(await ready(base)).toEqual({
          status: 200,
          body: {
            status: 'ready',
            dependencies: { postgres: 'ok', redis: 'ok' },
            ...(base === qa.base ? { search_index: 'gin' } : {}),
          },
        });
      for (const { child } of roles) expect(child.output()).not.toContain('"level":50');
    });
  },
);
