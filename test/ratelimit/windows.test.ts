import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authPlugin } from '../../services/http/auth.js';
import { rateLimitPlugin } from '../../services/http/rate-limit.js';
import { createHttpApp, type HttpApp } from '../../services/http/server.js';
import { createAuthenticator } from '../../shared/access/authenticate.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { expectRefused, limitHeaders } from './helpers.js';

/**
 * Window ends without waiting an hour: the same plugins as production, built with windows of seconds
 * (the durations are an option of the plugin, not of the environment).
 */
describe('rate-limit windows', () => {
  let runtime: TestRuntime;
  let app: HttpApp;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ANONYMOUS_HOURLY: '2', RATE_LIMIT_ANONYMOUS_DAILY: '3' });
    app = createHttpApp(runtime.config, runtime.logger);
    await app.register(authPlugin, {
      authenticate: createAuthenticator(runtime.database.db),
      header: 'bearer',
    });
    await app.register(rateLimitPlugin, {
      redis: runtime.redis,
      config: runtime.config,
      service: 'qa',
      windows: { hour: 2, day: 60 },
    });
    app.get('/ping', async () => ({ ok: true }));
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('restores the short window when it ends, keeps counting the long one, and refused requests cost nothing', async () => {
    const ping = () => app.inject({ url: '/ping', remoteAddress: '10.1.0.1' });
    expect(limitHeaders(await ping())).toMatchObject({ limit: 2, remaining: 1 });
    const second = await ping();
    expect(limitHeaders(second)).toMatchObject({ limit: 2, remaining: 0 });
    // Both windows are at 2 of their budgets; the "hour" resets first but has no room left, so it is reported.
    const refused = [await ping(), await ping(), await ping()];
    for (const res of refused) expect(expectRefused(res, 2)).toBeLessThanOrEqual(2);

    // Wait for the reset the server announced, not a guess.
    const resetMs = limitHeaders(refused[2]!).reset * 1000;
    await sleep(Math.max(0, resetMs - Date.now()) + 50);

    // Hour renewed (1 of 2 used); the day has 1 point left, as the three refusals were given back.
    const renewed = await ping();
    expect(renewed.statusCode).toBe(200);
    expect(limitHeaders(renewed)).toMatchObject({ limit: 3, remaining: 0 });
    const daily = await ping();
    expect(expectRefused(daily, 3)).toBeGreaterThan(50);
  });
});
