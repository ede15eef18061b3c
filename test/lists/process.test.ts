import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { QueueEvents } from 'bullmq';
import { listChunkJobId } from '../../shared/queues/verify-lists.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { get, jsonList, startListWorld, upload, waitForStatus, type VerifyApp } from './helpers.js';
import { duplicateConnection } from '../../shared/redis.js';

// Lists verified end to end by a real verify-lists worker (BullMQ on Redis) against the loopback DNS and SMTP world.

let world: Awaited<ReturnType<typeof startListWorld>>;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;
let queueEvents: QueueEvents;

beforeAll(async () => {
  world = await startListWorld();
  // Rate limits on, with room for every test: the cancel test reads its refund in the budget headers.
  runtime = await createTestRuntime(
    worldEnv(world.dns.endpoint, world.world.port, {
      RATE_LIMIT_ENABLED: 'true',
      VERIFY_RATE_LIMIT_HOURLY: '100000',
      VERIFY_RATE_LIMIT_DAILY: '100000',
    }),
  );
  pool = await startWorkerPool(runtime, ['verify-lists']);
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  queueEvents = new QueueEvents('verify-lists', {
    connection: duplicateConnection(runtime.redis, { maxRetriesPerRequest: null }),
    prefix: runtime.config.queuePrefix,
  });
  await queueEvents.waitUntilReady();
});

afterAll(async () => {
  await queueEvents?.close();
  await app?.close();
  // The mail world first: closing the tarpit ends the probe still waiting on it, so the workers drain at once.
  await world?.close();
  await pool?.close(5000);
  await runtime?.close();
});

const INPUT = [
  'alice@example.test',
  'bob@example.test',
  'not-an-address',
  'alice@EXAMPLE.test',
  'anyone@catchall.test',
  'carol@example.test',
  'alice@example.test',
];

describe('a list verified by a worker', () => {
  it('completes with every row verified once, in input order, duplicates included', async () => {
    const created = await jsonList(app, key, { emails: INPUT });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;
    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({
      status: 'completed',
      total: 7,
      unique: 5,
      duplicates: 2,
      processed: 7,
      progress: 100,
      counts: { valid: 4, invalid: 2, risky: 1, unknown: 0 },
      eta_seconds: null,
    });
    expect(list.started_at).not.toBeNull();
    expect(list.completed_at).not.toBeNull();

    const res = await get(app, key, `/lists/${id}/results`);
    expect(res.statusCode).toBe(200);
    const { results, complete, pagination } = res.json().data;
    expect(complete).toBe(true);
    expect(pagination).toEqual({ current_page: 1, total_pages: 1, total_items: 7, per_page: 100 });
    expect(results.map((r: { row: number }) => r.row)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(results.map((r: { email: string }) => r.email)).toEqual(INPUT);
    expect(results.map((r: { status: string }) => r.status)).toEqual([
      'valid',
      'invalid',
      'invalid',
      'valid',
      'risky',
      'valid',
      'valid',
    ]);
    expect(results[1]).toMatchObject({
      reason: 'mailbox_not_found',
      smtp_code: 550,
      mx_record: 'mx.example.test',
    });
    expect(results[2]).toMatchObject({ reason: 'bad_syntax', syntax_valid: false });
    expect(results[4]).toMatchObject({ reason: 'catch_all', is_catch_all: true });
    // Each distinct address was probed once: alice (any domain case) only once at the MX.
    const aliceRcpts = world.world.logs['127.0.6.2']!.rcpts.filter((r) => /^alice@/i.test(r));
    expect(aliceRcpts).toHaveLength(1);
  });

  it('pages and filters JSON results and streams NDJSON and CSV', async () => {
    const csv =
      'name,email\n"=HYPERLINK(""x"")",alice@example.test\n+1,bob@example.test\n@me,carol@example.test\n';
    const created = await upload(app, key, csv);
    const { id } = created.json().data;
    await waitForStatus(app, key, id, ['completed']);

    const page2 = (await get(app, key, `/lists/${id}/results?limit=2&page=2`)).json().data;
    expect(page2.results.map((r: { row: number }) => r.row)).toEqual([3]);
    expect(page2.pagination).toEqual({ current_page: 2, total_pages: 2, total_items: 3, per_page: 2 });
    const valid = (await get(app, key, `/lists/${id}/results?status=valid`)).json().data;
    expect(valid.results.map((r: { row: number }) => r.row)).toEqual([1, 3]);
    expect(valid.pagination.total_items).toBe(2);

    const ndjson = await get(app, key, `/lists/${id}/results?format=ndjson&status=invalid`);
    expect(ndjson.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = ndjson.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ row: 2, email: 'bob@example.test', status: 'invalid' });

    const out = await get(app, key, `/lists/${id}/results?format=csv`);
    expect(out.headers['content-type']).toMatch(/text\/csv/);
    const records = out.body.trim().split('\r\n');
    expect(records[0]).toBe(
      'name,email,status,syntax_valid,mx_found,smtp_valid,is_disposable,is_role_based,is_free_provider,' +
        'is_catch_all,domain,mx_record,score,reason,smtp_code,smtp_message,duration_ms,' +
        'mx_records,did_you_mean,verified_at,cached,normalized_email,row',
    );
    expect(records).toHaveLength(4);
    // Formula-looking cells are neutralised with an apostrophe; the uploaded columns come first.
    expect(records[1]).toMatch(/^"'=HYPERLINK\(""x""\)",alice@example\.test,valid,true,true,true,/);
    expect(records[2]).toMatch(/^'\+1,bob@example\.test,invalid,/);
    expect(records[3]).toMatch(/^'@me,carol@example\.test,valid,/);
    expect(records[3]).toMatch(/,3$/);
  });

  it('appends the result email to a CSV whose address column has another name', async () => {
    const created = await upload(app, key, 'Contact,Status\nAlice@Example.test,lead\n');
    const { id } = created.json().data;
    await waitForStatus(app, key, id, ['completed']);
    const records = (await get(app, key, `/lists/${id}/results?format=csv`)).body.trim().split('\r\n');
    // Status is the upload's own column: the result's status is appended as verify_status.
    expect(records[0]).toMatch(/^Contact,Status,email,verify_status,syntax_valid,/);
    expect(records[1]).toMatch(/^Alice@Example\.test,lead,Alice@Example\.test,valid,true,/);
  });

  it('cancels a running list: what is done stays readable, nothing more is written, the rest is refunded', async () => {
    // 100 catch-all addresses (one chunk, quickly done) and 100 behind a tarpit (the other chunk, hanging): a
    // domain's addresses are claimed in blocks of a chunk's size (migration 0019), so each domain is one chunk.
    const emails = [
      ...Array.from({ length: 100 }, (_, i) => `c${i}@catchall.test`),
      ...Array.from({ length: 100 }, (_, i) => `t${i}@tarpit.test`),
    ];
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;
    for (;;) {
      const list = (await get(app, key, `/lists/${id}`)).json().data;
      if (list.processed === 100) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = await get(app, key, `/lists/${id}`);
    // Reading a list is free: the budget is read from a request that costs one point (an empty list is a 400).
    const budget = async () => {
      const res = await jsonList(app, key, { emails: [] });
      expect(res.statusCode).toBe(400);
      return Number(res.headers['x-ratelimit-remaining']);
    };
    const remainingBefore = await budget();
    expect(Number.isInteger(remainingBefore)).toBe(true);
    // Running, with a rate observed: the ETA extrapolates it to the 100 addresses left.
    expect(before.json().data).toMatchObject({ status: 'running', progress: 50 });
    expect(before.json().data.eta_seconds).toBeGreaterThan(0);
    const cancelled = await app.inject({
      method: 'DELETE',
      url: `/lists/${id}`,
      headers: { 'x-api-key': key },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().data).toMatchObject({
      status: 'cancelled',
      processed: 100,
      counts: { valid: 0, invalid: 0, risky: 100, unknown: 0 },
      eta_seconds: null,
    });
    expect(cancelled.json().data.completed_at).not.toBeNull();
    // 100 addresses never verified come back; the DELETE is free, the probe of the budget costs its point.
    expect(await budget()).toBe(remainingBefore - 1 + 100);

    const results = (await get(app, key, `/lists/${id}/results?limit=1000`)).json().data;
    expect(results.complete).toBe(true);
    expect(results.results).toHaveLength(100);
    expect(results.results.every((r: { row: number }) => r.row <= 100)).toBe(true);

    // The tarpit chunk's probe ends (the world closes its connection); its results are dropped, not stored.
    const [tarpit] = await runtime.database.query<{ chunk: number }>(
      sql`SELECT chunk FROM verification_list_addresses WHERE list_id = ${id} AND domain = 'tarpit.test' LIMIT 1`,
    );
    const job = await runtime.queues.queue('verify-lists').getJob(listChunkJobId(id, tarpit!.chunk));
    await world.world.close();
    await job!.waitUntilFinished(queueEvents);
    const [stored] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM verification_list_rows WHERE list_id = ${id} AND result IS NOT NULL`,
    );
    expect(stored!.n).toBe(100);

    // A second DELETE removes the ended list and its results.
    const deleted = await app.inject({
      method: 'DELETE',
      url: `/lists/${id}`,
      headers: { 'x-api-key': key },
    });
    expect(deleted.statusCode).toBe(204);
    expect((await get(app, key, `/lists/${id}`)).statusCode).toBe(404);
    expect((await get(app, key, `/lists/${id}/results`)).statusCode).toBe(404);
    const [rows] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM verification_list_rows WHERE list_id = ${id}`,
    );
    expect(rows!.n).toBe(0);
  });
});
