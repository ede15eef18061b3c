import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from '../verify-service/slow-smtp.js';
import { get, jsonList, waitForStatus, type VerifyApp } from './helpers.js';

// A list of one domain is one chunk job. Its host answers slowly (one connection, every reply 40 ms late, 10 RCPTs
// per session), so the chunk takes seconds: its results must show while it runs, and a cancel must stop its probing.

const SLOW = '127.0.6.31';
const SLOW_TOO = '127.0.6.32';

let dns: DnsServer;
let smtp: SlowSmtpWorld;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;

beforeAll(async () => {
  smtp = await startSlowSmtp([SLOW, SLOW_TOO], { delayMs: 40, accepts: (a) => a.startsWith('user') });
  dns = await startDnsServer({
    ...mailDomain('slow.test', SLOW),
    ...mailDomain('slow-too.test', SLOW_TOO),
    ...Object.assign({}, ...Array.from({ length: 15 }, (_, d) => mailDomain(`d${d}.test`, SLOW))),
  });
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, smtp.port, { VERIFY_MX_CONCURRENCY: '1', VERIFY_MAX_RCPT_PER_SESSION: '10' }),
  );
  pool = await startWorkerPool(runtime, ['verify-lists']);
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await pool?.close(5000);
  await runtime?.close();
  await smtp?.close();
  await dns?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the list until some of its results are stored; returns the list then. */
async function firstProgress(id: string) {
  for (;;) {
    const list = (await get(app, key, `/lists/${id}`)).json().data;
    if (list.processed > 0) return list;
    await sleep(50);
  }
}

const storedRows = async (id: string) =>
  (
    await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM verification_list_rows WHERE list_id = ${id} AND result IS NOT NULL`,
    )
  )[0]!.n;

describe('a list whose one chunk takes seconds', () => {
  it('shows its results and progress while the chunk is still being probed', async () => {
    const emails = Array.from({ length: 60 }, (_, i) => `user${i}@slow.test`);
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;

    const running = await firstProgress(id);
    expect(running.status).toBe('running');
    expect(running.processed).toBeLessThan(60);
    expect(running.progress).toBeLessThan(100);
    const partial = (await get(app, key, `/lists/${id}/results?limit=1000`)).json().data;
    expect(partial.complete).toBe(false);
    expect(partial.results.length).toBeGreaterThan(0);
    expect(partial.results.length).toBeLessThan(60);
    expect(partial.results.every((r: { status: string }) => r.status === 'valid')).toBe(true);

    const done = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(done).toMatchObject({ status: 'completed', processed: 60, counts: { valid: 60 } });
  });

  it('stops probing when cancelled: the addresses no session has taken are never sent', async () => {
    const emails = Array.from({ length: 100 }, (_, i) => `user${i}@slow-too.test`);
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;
    await firstProgress(id);

    const cancelled = await app.inject({
      method: 'DELETE',
      url: `/lists/${id}`,
      headers: { 'x-api-key': key },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const atCancel = cancelled.json().data;
    expect(atCancel.status).toBe('cancelled');
    const rcptsAtCancel = smtp.stats.get(SLOW_TOO)!.rcpts;

    // Without the cancel, the host would go on for 100 addresses and a catch-all probe (about 10 s more). The worker
    // notices the cancel within half a second: the session under way then, and at most one more it began meanwhile,
    // finish their batches of at most 10; nothing after them.
    await sleep(3000);
    const rcpts = smtp.stats.get(SLOW_TOO)!.rcpts;
    expect(rcpts).toBeLessThanOrEqual(rcptsAtCancel + 20);
    expect(rcpts).toBeLessThan(101);
    await sleep(1000);
    expect(smtp.stats.get(SLOW_TOO)!.rcpts).toBe(rcpts);
    // Nothing was stored after the cancel.
    expect(await storedRows(id)).toBe(atCancel.processed);
  });

  it('probes a chunk of many domains without a warning about abort listeners', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const emails = Array.from({ length: 30 }, (_, i) => `user${i}@d${i % 15}.test`);
      const { id } = (await jsonList(app, key, { emails })).json().data;
      const done = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
      expect(done).toMatchObject({ status: 'completed', counts: { valid: 30 } });
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
