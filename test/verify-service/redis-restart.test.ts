import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { openRuntime, type Runtime } from '../../shared/runtime.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from './helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from './slow-smtp.js';

// Redis restarted without persistence (every job, lock, pending host item and event gone) while a /verify and a
// /bulk-verify wait for their jobs, with a real verify worker process. The worker finishes its probe but cannot
// complete the job (its key is gone), so no completion is ever announced: the requests used to wait for their
// whole deadline and answer unknown/timeout. The service notices that its jobs are gone and adds them again
// (shared/queues/completions.ts), and both answer with their real verdicts.

const HOST = '127.0.6.51';

let dns: DnsServer;
let smtp: SlowSmtpWorld;
let redisPort: number;
let redisServer: ChildProcess;
let base: TestRuntime;
let runtime: Runtime;
let app: Awaited<ReturnType<typeof buildVerifyApp>>;
let worker: RunningProcess;
let key: string;
let firstRcpt: () => void = () => {};
const rcptSeen = new Promise<void>((resolve) => (firstRcpt = resolve));

beforeAll(async () => {
  // Each SMTP reply takes 800 ms: a probe is a few seconds long, and Redis goes away in the middle of it.
  smtp = await startSlowSmtp([HOST], {
    delayMs: 800,
    accepts: (a) => /^(ann|ben)@/.test(a),
    onRcpt: () => firstRcpt(),
  });
  dns = await startDnsServer({
    'slow.test': { MX: [{ preference: 10, exchange: 'mx.slow.test' }] },
    'mx.slow.test': { A: [HOST] },
  });
  redisPort = await freePort();
  redisServer = await startRedis(redisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  // A deadline shorter than the default 60 s, still far beyond the probe's few seconds: on the old code the
  // requests answered unknown/timeout at it.
  base = await createTestRuntime(
    worldEnv(dns.endpoint, smtp.port, { REDIS_URL: redisUrl, VERIFY_BULK_DEADLINE_MS: '30000' }),
  );
  // The service on the test's own Redis too (createTestRuntime connects to the shared one).
  const config = loadConfig(base.env);
  runtime = await openRuntime(config, createLogger(config.logLevel, 'test'), redisUrl, { migrate: false });
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(base, { verify: ['verify'] })) as { verify: string });
  worker = startProcess('workers/main.ts', ['--queues', 'verify'], base.env);
  await worker.waitFor(/workers started/, 90_000);
}, 120_000);

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await app?.close();
  await runtime?.close();
  redisServer?.kill('SIGKILL');
  await base?.close();
  await smtp?.close();
  await dns?.close();
});

const post = (url: string, payload: unknown) =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    payload: JSON.stringify(payload),
  });

describe('Redis restarted empty under synchronous verifications', () => {
  it('adds the lost jobs again, and the requests answer their verdicts before the deadline', async () => {
    const single = post('/verify', { email: 'ann@slow.test' });
    const bulk = post('/bulk-verify', { emails: ['ben@slow.test', 'nobody@slow.test', 'ann@slow.test'] });

    // The worker is mid-probe: then Redis goes away and comes back without any of its data.
    await rcptSeen;
    redisServer.kill('SIGKILL');
    await new Promise((resolve) => redisServer.once('exit', resolve));
    await sleep(500);
    redisServer = await startRedis(redisPort);

    const [one, many] = await Promise.all([single, bulk]);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().data).toMatchObject({ email: 'ann@slow.test', status: 'valid', reason: 'accepted' });
    expect(many.statusCode, many.body).toBe(200);
    expect(many.json().data.map((r: { email: string; status: string }) => [r.email, r.status])).toEqual([
      ['ben@slow.test', 'valid'],
      ['nobody@slow.test', 'invalid'],
      ['ann@slow.test', 'valid'],
    ]);
  }, 120_000);
});
