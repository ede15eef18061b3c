import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { expectRefused, limitHeaders, userWithKey } from './helpers.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

describe('Q&A rate limits by plan', () => {
  let runtime: TestRuntime;
  let app: App;
  const others: App[] = [];

  beforeAll(async () => {
    runtime = await createTestRuntime({
      RATE_LIMIT_ANONYMOUS_HOURLY: '3',
      RATE_LIMIT_ANONYMOUS_DAILY: '100',
      RATE_LIMIT_AUTHENTICATED_HOURLY: '5',
      RATE_LIMIT_PREMIUM_HOURLY: '8',
    });
    app = await buildQaApp(runtime);
    // Start-up (plugins, the OpenAPI document, Redis) is not part of the window the first test measures.
    await app.ready();
  });
  afterAll(async () => {
    await Promise.all([app, ...others].map((a) => a.close()));
    await runtime.close();
  });

  const other = async (config: TestRuntime['config']) => {
    const built = await buildQaApp({ ...runtime, config });
    others.push(built);
    return built;
  };

  it('admits exactly the hourly budget of an anonymous client, counting down, then answers 429', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const remaining of [2, 1, 0]) {
      const res = await app.inject({ url: '/api/categories', remoteAddress: '10.0.0.1' });
      expect(res.statusCode).toBe(200);
      expect(limitHeaders(res)).toEqual({ limit: 3, remaining, reset: expect.any(Number) });
      expect(limitHeaders(res).reset).toBeGreaterThanOrEqual(now + 3599);
      expect(limitHeaders(res).reset).toBeLessThanOrEqual(now + 3602);
    }
    const refused = await app.inject({ url: '/api/categories', remoteAddress: '10.0.0.1' });
    const retryAfter = expectRefused(refused, 3);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Another client is not affected.
    expect((await app.inject({ url: '/api/categories', remoteAddress: '10.0.0.99' })).statusCode).toBe(200);
  });

  it('counts every route, unknown routes and internal *.php endpoints included, but not the probes or docs', async () => {
    const ip = '10.0.0.2';
    const missing = await app.inject({ url: '/api/no-such-thing', remoteAddress: ip });
    expect(missing.statusCode).toBe(404);
    expect(limitHeaders(missing).remaining).toBe(2);
    const internal = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      payload: {},
      remoteAddress: ip,
    });
    expect(internal.headers['x-ratelimit-remaining']).toBe('1');
    for (const probe of ['/health', '/ready']) {
      const res = await app.inject({ url: probe, remoteAddress: ip });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    // The OpenAPI document and the docs page are not charged either.
    for (const docs of ['/api/openapi.json', '/api/docs/']) {
      const res = await app.inject({ url: docs, remoteAddress: ip });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    expect(limitHeaders(await app.inject({ url: '/api/categories', remoteAddress: ip })).remaining).toBe(0);
    expectRefused(await app.inject({ url: '/api/no-such-thing', remoteAddress: ip }), 3);
    expect((await app.inject({ url: '/health', remoteAddress: ip })).statusCode).toBe(200);
  });

  it('gives a key the budget of its plan, apart from the anonymous budget of its IP', async () => {
    const ip = '10.0.0.3';
    const authenticated = await userWithKey(runtime.database.db, 'carol', 'authenticated');
    const premium = await userWithKey(runtime.database.db, 'dave', 'premium');
    const auth = { authorization: `Bearer ${authenticated.key}` };
    for (let remaining = 4; remaining >= 0; remaining--) {
      const res = await app.inject({ url: '/api/categories', headers: auth, remoteAddress: ip });
      expect(res.statusCode).toBe(200);
      expect(limitHeaders(res)).toMatchObject({ limit: 5, remaining });
    }
    expectRefused(await app.inject({ url: '/api/categories', headers: auth, remoteAddress: ip }), 5);
    // The same key from another address shares the key's budget.
    expectRefused(await app.inject({ url: '/api/categories', headers: auth, remoteAddress: '10.0.0.33' }), 5);

    const anonymous = await app.inject({ url: '/api/categories', remoteAddress: ip });
    expect(limitHeaders(anonymous)).toMatchObject({ limit: 3, remaining: 2 });
    const prem = await app.inject({
      url: '/api/categories',
      headers: { authorization: `Bearer ${premium.key}` },
      remoteAddress: ip,
    });
    expect(limitHeaders(prem)).toMatchObject({ limit: 8, remaining: 7 });
  });

  it('counts requests with a rejected key against the IP, with headers on the 401 and a 429 once spent', async () => {
    const ip = '10.0.0.4';
    const bad = { authorization: `Bearer agora_${'a'.repeat(12)}_${'b'.repeat(43)}` };
    for (const remaining of [2, 1, 0]) {
      const res = await app.inject({ url: '/api/categories', headers: bad, remoteAddress: ip });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: true, message: 'Invalid API key', code: 401 });
      expect(limitHeaders(res)).toMatchObject({ limit: 3, remaining });
    }
    expectRefused(await app.inject({ url: '/api/categories', headers: bad, remoteAddress: ip }), 3);
    expectRefused(await app.inject({ url: '/api/categories', remoteAddress: ip }), 3);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY trusts the peer', async () => {
    for (const forwarded of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) {
      const res = await app.inject({
        url: '/api/categories',
        headers: { 'x-forwarded-for': forwarded },
        remoteAddress: '10.0.0.5',
      });
      expect(res.statusCode).toBe(200);
    }
    expectRefused(
      await app.inject({
        url: '/api/categories',
        headers: { 'x-forwarded-for': '4.4.4.4' },
        remoteAddress: '10.0.0.5',
      }),
      3,
    );

    const proxied = await other({ ...runtime.config, trustProxy: ['10.0.0.6'] });
    for (const forwarded of ['5.5.5.5', '6.6.6.6']) {
      for (const remaining of [2, 1, 0]) {
        const res = await proxied.inject({
          url: '/api/categories',
          headers: { 'x-forwarded-for': forwarded },
          remoteAddress: '10.0.0.6',
        });
        expect(limitHeaders(res).remaining).toBe(remaining);
      }
    }
    // A peer that is not the trusted proxy cannot pick its address.
    for (const remaining of [2, 1, 0]) {
      const res = await proxied.inject({
        url: '/api/categories',
        headers: { 'x-forwarded-for': `7.7.7.${remaining}` },
        remoteAddress: '10.0.0.7',
      });
      expect(limitHeaders(res).remaining).toBe(remaining);
    }
  });

  it('refuses once the daily cap is reached even though the hour has room, reporting the daily window', async () => {
    const limits = runtime.config.rateLimits;
    const daily = await other({
      ...runtime.config,
      rateLimits: { ...limits, anonymous: { hour: 10, day: 2 } },
    });
    const first = await daily.inject({ url: '/api/categories', remoteAddress: '10.0.0.8' });
    expect(limitHeaders(first)).toMatchObject({ limit: 2, remaining: 1 });
    const now = Math.floor(Date.now() / 1000);
    expect(limitHeaders(first).reset).toBeGreaterThanOrEqual(now + 86_398);
    expect(
      limitHeaders(await daily.inject({ url: '/api/categories', remoteAddress: '10.0.0.8' })).remaining,
    ).toBe(0);
    const refused = await daily.inject({ url: '/api/categories', remoteAddress: '10.0.0.8' });
    expect(expectRefused(refused, 2)).toBeGreaterThan(86_000);
  });

  it('reports the window closest to running out while both have room', async () => {
    const limits = runtime.config.rateLimits;
    const close = await other({
      ...runtime.config,
      rateLimits: { ...limits, anonymous: { hour: 4, day: 6 } },
    });
    // hour 4 → 3 left of 4, day → 5 left of 6: the hour is tighter.
    expect(
      limitHeaders(await close.inject({ url: '/api/categories', remoteAddress: '10.0.0.9' })),
    ).toMatchObject({ limit: 4, remaining: 3 });
    const tighter = await other({
      ...runtime.config,
      rateLimits: { ...limits, anonymous: { hour: 5, day: 3 } },
    });
    expect(
      limitHeaders(await tighter.inject({ url: '/api/categories', remoteAddress: '10.0.0.10' })),
    ).toMatchObject({ limit: 3, remaining: 2 });
  });

  it('neither counts nor sends headers when RATE_LIMIT_ENABLED is false', async () => {
    const off = await other({
      ...runtime.config,
      rateLimits: { ...runtime.config.rateLimits, enabled: false },
    });
    for (let i = 0; i < 6; i++) {
      const res = await off.inject({ url: '/api/categories', remoteAddress: '10.0.0.11' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
