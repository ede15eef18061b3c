import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import { usersRepository } from '../../shared/db/repositories/users.js';
import { registry } from '../../shared/metrics.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** Outcome counters incremented by other modules: rate-limit rejections and verification results. */

const sample = (text: string, pattern: RegExp): number | undefined => {
  const match = text.split('\n').find((l) => pattern.test(l));
  return match === undefined ? undefined : Number(match.split(' ').at(-1));
};

describe('outcome metrics', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;

  beforeAll(async () => {
    // The registry is the process's, and test files share their process (vitest.config.ts): count from zero.
    registry.resetMetrics();
    runtime = await createTestRuntime({
      RATE_LIMIT_ANONYMOUS_HOURLY: '2',
      RATE_LIMIT_ANONYMOUS_DAILY: '100',
    });
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
  });
  afterAll(async () => {
    await qa?.close();
    await verify?.close();
    await runtime?.close();
  });

  it('counts 429s by service, plan and the window that ran out', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await qa.inject('/api/categories')).statusCode);
    expect(statuses).toEqual([200, 200, 429, 429]);
    const text = (await qa.inject('/metrics')).body;
    expect(
      sample(text, /^agora_rate_limit_rejections_total\{service="qa",plan="anonymous",window="[^"]+"\} /),
    ).toBe(2);
  });

  it('counts verification results by status', async () => {
    await usersRepository(runtime.database.db).create({ username: 'verifier' });
    const { key } = await createApiKey(runtime.database.db, {
      username: 'verifier',
      plan: 'authenticated',
      scopes: ['verify'],
    });
    for (const email of ['no-at-sign', 'two@@example.com']) {
      const response = await verify.inject({
        method: 'POST',
        url: '/verify',
        headers: { 'x-api-key': key },
        payload: { email },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().data.status).toBe('invalid');
    }
    const text = (await verify.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, /^agora_verification_results_total\{status="invalid",source="single"\} /)).toBe(2);
  });
});
