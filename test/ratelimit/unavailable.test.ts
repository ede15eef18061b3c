import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { userWithKey } from './helpers.js';

// While PostgreSQL is away a key cannot even be read, so a keyed request was counted as its address's anonymous
// request; once that small budget ran out, each 503 (Retry-After: 2) became a 429 with Retry-After of about an
// hour, and the address's budget stayed spent for the rest of it. An answer the service could not give costs
// nothing.
describe('requests the service cannot answer', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let key: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ANONYMOUS_HOURLY: '2', QA_READ_CACHE_TTL_MS: '0' });
    ({ key } = await userWithKey(runtime.database.db, 'outage-reader'));
    app = await buildQaApp(runtime);
    expect((await app.inject('/api/questions')).statusCode).toBe(200);
    // The pool is ended: every statement now fails as on a server that went away (CONNECTION_ENDED).
    await runtime.database.close();
  });
  afterAll(async () => {
    await app.close();
    await runtime.close().catch(() => {});
  });

  it('answer a key 503 with Retry-After every time, and spend no budget of its address', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await app.inject({
        url: '/api/questions?page=2',
        headers: { authorization: `Bearer ${key}` },
      });
      expect({ status: res.statusCode, retryAfter: res.headers['retry-after'] }).toEqual({
        status: 503,
        retryAfter: '2',
      });
      expect(res.json()).toMatchObject({ error: true, code: 503 });
    }
    // The address's anonymous budget (2 an hour) still has the point the first read left.
    const anonymous = await app.inject('/api/questions?page=3');
    expect(anonymous.statusCode).toBe(503);
    expect(anonymous.headers['x-ratelimit-remaining']).toBe('0');
  });
});
