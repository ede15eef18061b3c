import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireScope } from '../../services/http/auth.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { expectRefused, limitHeaders, userWithKey } from './helpers.js';

/**
 * The verification service's budgets are per key and a batch costs one point per address. The cost hook is
 * exercised through a test-only route shaped like /bulk-verify, registered here and not in the source.
 */
describe('verification rate limits with a per-request cost', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildVerifyApp>>;
  let key: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({
      VERIFY_RATE_LIMIT_HOURLY: '10',
      VERIFY_RATE_LIMIT_DAILY: '1000',
      RATE_LIMIT_ANONYMOUS_HOURLY: '2',
    });
    app = await buildVerifyApp(runtime);
    app.post(
      '/test/batch',
      {
        schema: { body: Type.Object({ emails: Type.Array(Type.String(), { maxItems: 100 }) }) },
        preHandler: requireScope('verify'),
        config: { rateLimitCost: (request) => (request.body as { emails: string[] }).emails.length },
      },
      async (request) => ({ success: true, count: (request.body as { emails: string[] }).emails.length }),
    );
    app.get('/test/single', { preHandler: requireScope('verify') }, async () => ({ success: true }));
    ({ key } = await userWithKey(runtime.database.db, 'verifier', 'authenticated', ['verify']));
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  const batch = (n: number, headers: Record<string, string> = { 'x-api-key': key }) =>
    app.inject({
      method: 'POST',
      url: '/test/batch',
      headers,
      payload: { emails: Array.from({ length: n }, (_, i) => `a${i}@example.com`) },
    });

  it('counts each address of a batch, refuses a batch that does not fit without charging it, then admits what fits', async () => {
    const four = await batch(4);
    expect(four.statusCode).toBe(200);
    expect(limitHeaders(four)).toMatchObject({ limit: 10, remaining: 6 });

    // 7 > 6 left: refused, and the six points are still there afterwards.
    const seven = await batch(7);
    expect(seven.statusCode).toBe(429);
    expect(seven.json()).toEqual({ error: true, message: 'Rate limit exceeded', code: 429 });
    expect(Number(seven.headers['retry-after'])).toBeGreaterThan(0);
    expect(limitHeaders(seven)).toMatchObject({ limit: 10, remaining: 6 });

    const six = await batch(6);
    expect(six.statusCode).toBe(200);
    expect(limitHeaders(six)).toMatchObject({ limit: 10, remaining: 0 });
    expectRefused(await app.inject({ url: '/test/single', headers: { 'x-api-key': key } }), 10);
    expectRefused(await batch(1), 10);
  });

  it('counts one point for a request whose body is refused before the cost can be known', async () => {
    const other = await userWithKey(runtime.database.db, 'verifier2', 'premium', ['verify']);
    const res = await app.inject({
      method: 'POST',
      url: '/test/batch',
      headers: { 'x-api-key': other.key },
      payload: { addresses: ['a@example.com'] },
    });
    expect(res.statusCode).toBe(400);
    // Premium or not, a verification key has the verification budget.
    expect(limitHeaders(res)).toMatchObject({ limit: 10, remaining: 9 });
    expect(limitHeaders(await batch(3, { 'x-api-key': other.key }))).toMatchObject({ remaining: 6 });
  });

  it('limits callers without a key by IP with the anonymous budget', async () => {
    for (const remaining of [1, 0]) {
      const res = await app.inject({
        method: 'POST',
        url: '/test/batch',
        payload: { emails: ['a@example.com'] },
        remoteAddress: '10.4.0.1',
      });
      expect(res.statusCode).toBe(401);
      expect(limitHeaders(res)).toMatchObject({ limit: 2, remaining });
    }
    expectRefused(
      await app.inject({
        method: 'POST',
        url: '/test/batch',
        payload: { emails: [] },
        remoteAddress: '10.4.0.1',
      }),
      2,
    );
  });
});
