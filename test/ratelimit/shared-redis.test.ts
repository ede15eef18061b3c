import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { connectRedis, type Redis } from '../../shared/redis.js';
import { REDIS_URL } from '../support/postgres.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { limitHeaders } from './helpers.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

/** Two API processes' worth of apps, each with its own Redis connection, sharing one budget through Redis. */
describe('rate limits shared by every API process', () => {
  let runtime: TestRuntime;
  let first: App;
  let second: App;
  let secondRedis: Redis;

  beforeAll(async () => {
    runtime = await createTestRuntime({
      RATE_LIMIT_ANONYMOUS_HOURLY: '7',
      RATE_LIMIT_ANONYMOUS_DAILY: '1000',
    });
    first = await buildQaApp(runtime);
    secondRedis = connectRedis(REDIS_URL, 'producer');
    second = await buildQaApp({ ...runtime, redis: secondRedis });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    secondRedis.disconnect();
    await runtime.close();
  });

  it('counts alternating requests to two instances against one budget', async () => {
    const apps = [first, second];
    for (let i = 0; i < 7; i++) {
      const res = await apps[i % 2]!.inject({ url: '/api/categories', remoteAddress: '10.2.0.1' });
      expect(res.statusCode).toBe(200);
      expect(limitHeaders(res).remaining).toBe(6 - i);
    }
    expect((await first.inject({ url: '/api/categories', remoteAddress: '10.2.0.1' })).statusCode).toBe(429);
    expect((await second.inject({ url: '/api/categories', remoteAddress: '10.2.0.1' })).statusCode).toBe(429);
  });

  it('admits exactly the budget when both instances are hit at once', async () => {
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? first : second).inject({ url: '/api/categories', remoteAddress: '10.2.0.2' }),
      ),
    );
    const statuses = burst.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(23);
    // Every admitted request saw a distinct count.
    const remaining = burst.filter((r) => r.statusCode === 200).map((r) => limitHeaders(r).remaining);
    expect(remaining.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('keeps its keys under the deployment prefix', async () => {
    const keys = await runtime.redis.keys(`${runtime.config.queuePrefix}:ratelimit:qa:anonymous:*`);
    expect(keys.some((k) => k.endsWith(':hour:ip:10.2.0.1'))).toBe(true);
    expect(keys.some((k) => k.endsWith(':day:ip:10.2.0.2'))).toBe(true);
    expect(
      await runtime.redis.get(`${runtime.config.queuePrefix}:ratelimit:qa:anonymous:day:ip:10.2.0.2`),
    ).toBe('7');
  });
});
