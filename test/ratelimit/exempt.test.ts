import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { expectRefused } from './helpers.js';

describe('routes the rate limits leave alone', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime({
      RATE_LIMIT_ANONYMOUS_HOURLY: '2',
      ADMIN_TOKEN: 'operator-token-for-tests',
    });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('never counts probes, while the API budget runs out', async () => {
    for (let i = 0; i < 5; i++) {
      for (const url of ['/health', '/ready']) {
        const res = await app.inject(url);
        expect(res.statusCode).not.toBe(429);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
    expect((await app.inject('/api/categories')).statusCode).toBe(200);
    expect((await app.inject('/api/categories')).statusCode).toBe(200);
    expectRefused(await app.inject('/api/categories'), 2);
  });

  // Only a signed-in operator's panel traffic is free (test/security/admin-sessions.test.ts); the login form and
  // guesses at /admin URLs are anonymous requests like any other (issue 23).
  it('counts anonymous /admin requests', async () => {
    const res = await app.inject({ url: '/admin/login', remoteAddress: '192.0.2.77' });
    expect(res.headers['x-ratelimit-limit']).toBe('2');
  });
});
