import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
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
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from '../verify-service/slow-smtp.js';
import { get, jsonList, waitForStatus, type VerifyApp } from './helpers.js';
import { LIST_CHUNK_ADDRESSES, LIST_LANES } from '../../shared/queues/verify-lists.js';

// Redis restarted (without persistence: every job, lock and scheduler gone) in the middle of a list, with a real
// verify-lists worker process: the list resumes and completes from what PostgreSQL holds, every row written once.

const HOSTS = ['127.0.6.31', '127.0.6.32', '127.0.6.33', '127.0.6.34'];
const DOMAINS = HOSTS.map((_, k) => `d${k}.test`);
// Twice what a list keeps in flight (its lanes' chunks), so that results are stored in rounds and the restart can
// fall between them.
const PER_DOMAIN = (LIST_LANES * LIST_CHUNK_ADDRESSES) / 2;

let dns: DnsServer;
let smtp: SlowSmtpWorld;
let redisPort: number;
let redisServer: ChildProcess;
let base: TestRuntime;
let runtime: Runtime;
let app: VerifyApp;
let worker: RunningProcess;
let key: string;

beforeAll(async () => {
  smtp = await startSlowSmtp(HOSTS, { delayMs: 20, accepts: (a) => a.startsWith('user') });
  dns = await startDnsServer(
    Object.fromEntries(
      DOMAINS.flatMap((domain, k) => [
        [domain, { MX: [{ preference: 10, exchange: `mx.${domain}` }] }],
        [`mx.${domain}`, { A: [HOSTS[k]!] }],
      ]),
    ),
  );
  redisPort = await freePort();
  redisServer = await startRedis(redisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  base = await createTestRuntime(
    worldEnv(dns.endpoint, smtp.port, { REDIS_URL: redisUrl, WORKER_LOCK_MS: '2000' }),
  );
  // The service on the test's own Redis too (createTestRuntime connects to the shared one).
  const config = loadConfig(base.env);
  runtime = await openRuntime(config, createLogger(config.logLevel, 'test'), redisUrl, { migrate: false });
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(base, { verify: ['verify'] })) as { verify: string });
  worker = startProcess('workers/main.ts', ['--queues', 'verify-lists'], base.env);
  await worker.waitFor(/workers started/, 90_000);
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await app?.close();
  await runtime?.close();
  redisServer?.kill('SIGKILL');
  await base?.close();
  await smtp?.close();
  await dns?.close();
});

describe('Redis restarted in the middle of a list', () => {
  it('resumes from PostgreSQL and completes, every row written once', async () => {
    const emails = DOMAINS.flatMap((domain) =>
      Array.from({ length: PER_DOMAIN }, (_, i) =>
        i % 10 === 9 ? `nobody${i}@${domain}` : `user${i}@${domain}`,
      ),
    );
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;

    // Some results stored, not all: then Redis goes away and comes back empty.
    for (;;) {
      const list = (await get(app, key, `/lists/${id}`)).json().data;
      if (list.processed > 0) {
        expect(list.processed).toBeLessThan(emails.length);
        break;
      }
      await sleep(50);
    }
    redisServer.kill('SIGKILL');
    await new Promise((resolve) => redisServer.once('exit', resolve));
    await sleep(500);
    redisServer = await startRedis(redisPort);

    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    const invalid = emails.filter((e) => e.startsWith('nobody')).length;
    expect(list).toMatchObject({
      status: 'completed',
      total: emails.length,
      processed: emails.length,
      counts: { valid: emails.length - invalid, invalid, risky: 0, unknown: 0 },
    });
    const [state] = await base.database.query<{ probed: number; rows: number; verified: number }>(
      sql`SELECT l.probed,
            (SELECT count(*)::int FROM verification_list_rows r WHERE r.list_id = l.id AND r.result IS NOT NULL) AS rows,
            (SELECT count(*)::int FROM verification_list_addresses a WHERE a.list_id = l.id AND a.verified) AS verified
          FROM verification_lists l WHERE l.id = ${id}`,
    );
    expect(state).toEqual({ probed: emails.length, rows: emails.length, verified: emails.length });
  }, 150_000);
});
