import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { createKeys, worldEnv } from './helpers.js';

// A domain whose host answers some of a request's addresses and then hangs on the next session: at the request's
// deadline, the addresses answered keep their verdicts; only the ones still waiting answer unknown/timeout.

const HALF = '127.0.5.41';

let world: MailWorld;
let dns: DnsServer;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: Awaited<ReturnType<typeof buildVerifyApp>>;
let key: string;

beforeAll(async () => {
  world = await startMailWorld({
    [HALF]: {
      kind: 'raw',
      rcpt: (a) =>
        a.startsWith('stuck') ? 'hang' : a.startsWith('ann') ? undefined : '550 5.1.1 No such user',
    },
  });
  dns = await startDnsServer(mailDomain('half.test', HALF));
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, world.port, {
      // One connection, one address per session (a session's RCPTs less the catch-all probe's): the answered
      // address's session ends before the stuck one's begins.
      VERIFY_MX_CONCURRENCY: '1',
      VERIFY_MAX_RCPT_PER_SESSION: '2',
      VERIFY_BULK_DEADLINE_MS: '4000',
      VERIFY_SMTP_TIMEOUT_MS: '20000',
      VERIFY_PROBE_TIMEOUT_MS: '30000',
    }),
  );
  pool = await startWorkerPool(runtime, ['verify']);
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await world?.close(); // ends the hanging session, so the workers drain at once
  await pool?.close(5000);
  await runtime?.close();
  await dns?.close();
});

describe('a /bulk-verify whose domain is only partly answered by the deadline', () => {
  it('keeps the verdicts the host gave and answers timeout for the rest', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/bulk-verify',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: { emails: ['ann@half.test', 'stuck@half.test'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [ann, stuck] = res.json().data;
    expect(ann).toMatchObject({ email: 'ann@half.test', status: 'valid', smtp_code: 250 });
    expect(stuck).toMatchObject({ email: 'stuck@half.test', status: 'unknown', reason: 'timeout' });
  });
});
