import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from './helpers.js';

// The max_age body field of /verify and /bulk-verify (issue 20): optional, whole seconds, 0 or more; a bad one is a
// 400 naming the field, never a 500. That a good one reaches the cache is tested in verification/result-cache.test.ts.

let runtime: TestRuntime;
let app: Awaited<ReturnType<typeof buildVerifyApp>>;
let key: string;

beforeAll(async () => {
  runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

const post = (url: string, body: unknown) =>
  app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload: body as object });

describe('max_age', () => {
  it.each([-1, 1.5, '60', null, true, 1e12])('refuses %s with a 400 naming the field', async (maxAge) => {
    for (const res of [
      await post('/verify', { email: 'a@example.com', max_age: maxAge }),
      await post('/bulk-verify', { emails: ['a@example.com'], max_age: maxAge }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, message: expect.stringMatching(/max_age/), code: 400 });
    }
  });

  it('is optional: a bad address without it is graded at once', async () => {
    const res = await post('/verify', { email: 'not-an-address' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'invalid', syntax_valid: false, cached: false });
  });
});
