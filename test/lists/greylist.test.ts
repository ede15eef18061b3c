import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { sweepLists } from '../../shared/lists/sweep.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { get, jsonList, waitForStatus, type VerifyApp } from './helpers.js';

// Greylisting inside a list (issue 15): a real loopback SMTP server defers `later` once and `never` every time. The
// list waits for its retries (delayed BullMQ jobs, retry_at in PostgreSQL) at 1, 3, 6 × VERIFY_LIST_RETRY_DELAY_MS
// within VERIFY_LIST_RETRY_WINDOW_MS: `later` ends valid on its second probe, `never` settles as unknown once the
// window leaves no room for another retry.

const GREY = '127.0.6.5';
const DELAY_MS = 1000;
// 9 delays: the third probe (due 3 delays after the second deferral, 4 after the first) still fits when the second
// probe runs seconds late on a loaded machine, while a fourth (6 delays after the third deferral, so ≥ 10 after the
// first) never does.
const WINDOW_MS = 9000;
const GREYLISTED = '450 4.7.1 Recipient address rejected: Greylisted, please try again later';

let dns: DnsServer;
let world: MailWorld;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;
const probes = new Map<string, number[]>();

beforeAll(async () => {
  world = await startMailWorld({
    [GREY]: {
      kind: 'raw',
      rcpt: (address) => {
        const local = address.slice(0, address.indexOf('@'));
        const times = probes.get(local) ?? [];
        times.push(Date.now());
        probes.set(local, times);
        if (local === 'alice') return '250 2.1.5 Ok';
        if (local === 'never') return GREYLISTED;
        if (local === 'later' || local === 'lost') return times.length === 1 ? GREYLISTED : '250 2.1.5 Ok';
        return '550 5.1.1 User unknown';
      },
    },
  });
  dns = await startDnsServer({ ...mailDomain('greylist.test', GREY) });
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, world.port, {
      VERIFY_LIST_RETRY_DELAY_MS: String(DELAY_MS),
      VERIFY_LIST_RETRY_WINDOW_MS: String(WINDOW_MS),
    }),
  );
  pool = await startWorkerPool(runtime, ['verify-lists']);
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await world?.close();
  await dns?.close();
  await pool?.close(5000);
  await runtime?.close();
});

describe('a greylisted address inside a list', () => {
  // 60 s: room for the bounded wait for the first result (30 s) and the retries after it.
  it('is retried with backoff within the window; the list completes only once every row is settled', async () => {
    const emails = [
      'alice@greylist.test',
      'later@greylist.test',
      'never@greylist.test',
      'later@greylist.test',
    ];
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;

    // While deferred addresses wait: running, their rows without a result, the eta covering the wait.
    let waiting: Record<string, unknown> | undefined;
    for (const deadline = Date.now() + 30_000; !waiting && Date.now() < deadline;) {
      const list = (await get(app, key, `/lists/${id}`)).json().data;
      if (list.processed === 1) waiting = list;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(waiting).toMatchObject({ status: 'running', processed: 1, progress: 25, counts: { valid: 1 } });
    expect(waiting!.eta_seconds).toEqual(expect.any(Number));
    const [held] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM verification_list_addresses
          WHERE list_id = ${id} AND retry_at IS NOT NULL AND NOT verified`,
    );
    expect(held!.n).toBe(2);

    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({
      status: 'completed',
      total: 4,
      unique: 3,
      processed: 4,
      progress: 100,
      counts: { valid: 3, invalid: 0, risky: 0, unknown: 1 },
    });
    const results = (await get(app, key, `/lists/${id}/results`)).json().data.results;
    expect(
      results.map((r: { email: string; status: string; reason: string }) => [r.email, r.status]),
    ).toEqual([
      ['alice@greylist.test', 'valid'],
      ['later@greylist.test', 'valid'],
      ['never@greylist.test', 'unknown'],
      ['later@greylist.test', 'valid'],
    ]);
    expect(results[2]).toMatchObject({ reason: 'greylisted', smtp_code: 450 });

    // `later`: deferred once, accepted one delay later. `never`: probed at 0, 1 and 4 delays; a retry at 10 would
    // fall outside the 9-delay window, so the third deferral settled it.
    const later = probes.get('later')!;
    expect(later).toHaveLength(2);
    expect(later[1]! - later[0]!).toBeGreaterThanOrEqual(DELAY_MS - 50);
    const never = probes.get('never')!;
    expect(never).toHaveLength(3);
    expect(never[1]! - never[0]!).toBeGreaterThanOrEqual(DELAY_MS - 50);
    expect(never[2]! - never[1]!).toBeGreaterThanOrEqual(3 * DELAY_MS - 50);
    expect(probes.get('alice')).toHaveLength(1);
  }, 60_000);

  it('waits in PostgreSQL: a retry job lost with Redis is re-created by the sweeper', async () => {
    const created = await jsonList(app, key, { emails: ['lost@greylist.test'] });
    const { id } = created.json().data;
    const waitingRows = async () =>
      (
        await runtime.database.query<{ n: number }>(
          sql`SELECT count(*)::int AS n FROM verification_list_addresses
              WHERE list_id = ${id} AND retry_at IS NOT NULL AND NOT verified`,
        )
      )[0]!.n;
    while ((await waitingRows()) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    // Redis loses every job, the delayed retry included.
    await runtime.queues.queue('verify-lists').obliterate({ force: true });
    const swept = await sweepLists({
      database: runtime.database,
      queues: runtime.queues,
      logger: runtime.logger,
    });
    expect(swept.enqueued).toBeGreaterThanOrEqual(1);
    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({ status: 'completed', counts: { valid: 1 } });
    expect(probes.get('lost')).toHaveLength(2);
  });
});
