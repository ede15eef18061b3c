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

  // Every OPTIONS request lands on @fastify/cors's match-everything route; only the preflights it answers are free.
  it('counts OPTIONS requests that are not a CORS preflight, and keeps preflights free', async () => {
    const remoteAddress = '192.0.2.78';
    const preflight = () =>
      app.inject({
        method: 'OPTIONS',
        url: '/api/questions',
        remoteAddress,
        headers: { origin: 'https://reader.example', 'access-control-request-method': 'GET' },
      });
    const unknownKey = `agora_abcdefabcdef_${'A'.repeat(43)}`;
    const notPreflights = [
      { method: 'OPTIONS' as const, url: '/api/questions', status: 405 },
      {
        method: 'OPTIONS' as const,
        url: '/nowhere',
        status: 401,
        headers: { authorization: `Bearer ${unknownKey}` },
      },
    ];
    for (const { status, ...request } of notPreflights) {
      const res = await app.inject({ ...request, remoteAddress: '192.0.2.79' });
      expect(res.statusCode).toBe(status);
      expect(res.headers['x-ratelimit-limit']).toBe('2');
    }
    // The budget of 2 is spent: an unknown path under OPTIONS (a 404) is refused too.
    expectRefused(await app.inject({ method: 'OPTIONS', url: '/nowhere', remoteAddress: '192.0.2.79' }), 2);

    for (let i = 0; i < 3; i++) {
      const res = await preflight();
      expect(res.statusCode).toBe(204);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    expect((await app.inject({ url: '/api/categories', remoteAddress })).statusCode).toBe(200);
  });
});
