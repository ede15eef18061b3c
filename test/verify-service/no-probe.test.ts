import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { verifyKeyPrefix } from '../../shared/verification/service.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from './helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from './slow-smtp.js';

// Only worker processes probe: the verify HTTP app validates, enqueues and answers. With no worker running, its
// requests reach no mail server and leave no trace of the dispatch (no liveness key, no host claim, no SMTP slot);
// what it cannot finish by the deadline answers unknown/timeout, and bad syntax is still graded at once.

const HOST = '127.0.5.30';

describe('the verify HTTP process without workers', () => {
  let dns: DnsServer;
  let smtp: SlowSmtpWorld;
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildVerifyApp>>;
  let key: string;

  beforeAll(async () => {
    smtp = await startSlowSmtp([HOST], { delayMs: 0, accepts: () => true });
    dns = await startDnsServer(mailDomain('quiet.test', HOST));
    // A short request deadline: with nobody to take the jobs, only the deadline ends the wait.
    runtime = await createTestRuntime(worldEnv(dns.endpoint, smtp.port, { VERIFY_BULK_DEADLINE_MS: '1500' }));
    app = await buildVerifyApp(runtime);
    ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    await smtp?.close();
    await dns?.close();
  });

  const post = (url: string, payload: object) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload,
    });

  it('enqueues /verify and /bulk-verify instead of probing, and answers timeout at the deadline', async () => {
    const single = await post('/verify', { email: 'ann@quiet.test' });
    expect(single.statusCode).toBe(200);
    expect(single.json().data).toMatchObject({
      email: 'ann@quiet.test',
      status: 'unknown',
      reason: 'timeout',
    });
    const bad = await post('/verify', { email: 'not an address' });
    expect(bad.json().data).toMatchObject({ status: 'invalid', reason: 'bad_syntax' });
    const many = await post('/bulk-verify', { emails: ['ben@quiet.test', 'nope'] });
    expect(many.json().data.map((r: { reason: string }) => r.reason)).toEqual(['timeout', 'bad_syntax']);

    expect(smtp.stats.get(HOST)!.connections).toBe(0);
    expect(await runtime.queues.queue('verify').getWaitingCount()).toBe(2);
    // The engine's keys (verifyKeyPrefix): host claims, liveness, slots, pacing, DNS and catch-all facts.
    for (const kind of ['mx-', 'dns:', 'catch-all:'])
      expect(await runtime.redis.keys(`${verifyKeyPrefix(runtime.config)}${kind}*`)).toEqual([]);
  });
});
