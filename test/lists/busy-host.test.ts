import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from '../verify-service/slow-smtp.js';
import { get, jsonList, waitForStatus, type VerifyApp } from './helpers.js';

// A list whose addresses all wait on one busy MX host: one connection at a time, every reply 50 ms late, so the
// host's queue takes longer to drain than a chunk waits for its answers (4 probe timeouts). The addresses the host
// did not get to in time were never probed: the list retries them later (as it does a greylisted address) instead
// of storing them `unknown`, and completes with every verdict right.

const BUSY = '127.0.6.22';
const ADDRESSES = 600;

let dns: DnsServer;
let smtp: SlowSmtpWorld;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;

beforeAll(async () => {
  smtp = await startSlowSmtp([BUSY], { delayMs: 50, accepts: (a) => a.startsWith('user') });
  dns = await startDnsServer({ ...mailDomain('busy.test', BUSY) });
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, smtp.port, {
      VERIFY_MX_CONCURRENCY: '1',
      // A chunk waits 4 probe timeouts (20 s) for its answers; the host needs about 35 s for the whole list.
      VERIFY_PROBE_TIMEOUT_MS: '5000',
      VERIFY_SMTP_TIMEOUT_MS: '2000',
      VERIFY_LIST_RETRY_DELAY_MS: '1000',
      VERIFY_LIST_RETRY_WINDOW_MS: '300000',
    }),
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

describe('a list on a host busier than a chunk waits', () => {
  it('retries what the host did not get to, and completes with every address verified', async () => {
    const emails = Array.from({ length: ADDRESSES }, (_, i) => `user${i}@busy.test`);
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;

    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({
      status: 'completed',
      processed: ADDRESSES,
      counts: { valid: ADDRESSES, invalid: 0, risky: 0, unknown: 0 },
    });
    // The host was busier than the wait: some addresses went back for a retry, and each was probed once in the end.
    const [state] = await runtime.database.query<{ retried: number }>(
      sql`SELECT count(*)::int AS retried FROM verification_list_addresses WHERE list_id = ${id} AND deferrals > 0`,
    );
    expect(state!.retried).toBeGreaterThan(0);
    const results = (await get(app, key, `/lists/${id}/results?limit=1000`)).json().data.results;
    expect(results.filter((r: { status: string }) => r.status !== 'valid')).toEqual([]);
  }, 300_000);
});
