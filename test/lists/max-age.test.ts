import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import {
  expectError,
  get,
  jsonList,
  MAIN,
  startListWorld,
  upload,
  waitForStatus,
  type VerifyApp,
} from './helpers.js';

// max_age of POST /lists (issue 20): stored with the list and honoured by every chunk. A cached verdict costs no
// SMTP connection, max_age=0 probes again: counted on the loopback mail server.

let world: Awaited<ReturnType<typeof startListWorld>>;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;

beforeAll(async () => {
  world = await startListWorld();
  runtime = await createTestRuntime(worldEnv(world.dns.endpoint, world.world.port));
  pool = await startWorkerPool(runtime, ['verify-lists']);
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await world?.close();
  await pool?.close(5000);
  await runtime?.close();
});

const EMAILS = ['alice@example.test', 'carol@example.test', 'bob@example.test'];

async function verifyList(create: () => ReturnType<typeof jsonList>) {
  const created = await create();
  expect(created.statusCode, created.body).toBe(202);
  const { id } = created.json().data;
  const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
  expect(list.status).toBe('completed');
  const results = (await get(app, key, `/lists/${id}/results`)).json().data.results as Array<{
    email: string;
    status: string;
    cached: boolean;
  }>;
  return results;
}

describe('max_age on POST /lists', () => {
  it('reuses cached verdicts without a connection, and max_age=0 probes again', async () => {
    const logs = world.world.logs[MAIN]!;
    const first = await verifyList(() => jsonList(app, key, { emails: EMAILS }));
    expect(first.map((r) => [r.email, r.status, r.cached])).toEqual([
      ['alice@example.test', 'valid', false],
      ['carol@example.test', 'valid', false],
      ['bob@example.test', 'invalid', false],
    ]);
    const afterFirst = logs.connections;
    expect(afterFirst).toBeGreaterThan(0);

    // Within an hour: every verdict comes from the cache, the mail server sees nothing.
    const cached = await verifyList(() => jsonList(app, key, { emails: EMAILS, max_age: 3600 }));
    expect(cached.map((r) => [r.status, r.cached])).toEqual([
      ['valid', true],
      ['valid', true],
      ['invalid', true],
    ]);
    expect(logs.connections).toBe(afterFirst);

    // The same through an upload's query parameter.
    const uploaded = await verifyList(() =>
      upload(app, key, EMAILS.join('\n'), { type: 'text/plain', query: '?max_age=600' }),
    );
    expect(uploaded.every((r) => r.cached)).toBe(true);
    expect(logs.connections).toBe(afterFirst);

    // max_age=0: fresh probes, counted on the server.
    const rcptsBefore = logs.rcpts.length;
    const fresh = await verifyList(() => jsonList(app, key, { emails: EMAILS, max_age: 0 }));
    expect(fresh.map((r) => [r.status, r.cached])).toEqual([
      ['valid', false],
      ['valid', false],
      ['invalid', false],
    ]);
    // Counted by RCPT, not by connection: a host's session may still linger open from the first list.
    expect(logs.rcpts.slice(rcptsBefore)).toEqual(expect.arrayContaining(EMAILS));
  });

  it.each([-1, 1.5, '60', null, true, 1e12])(
    'refuses max_age %s in JSON with a 400 naming it',
    async (maxAge) => {
      expectError(await jsonList(app, key, { emails: EMAILS, max_age: maxAge }), 400, /max_age/);
    },
  );

  it.each(['-1', 'soon', '1.5', '99999999999'])(
    'refuses ?max_age=%s on an upload with a 400',
    async (maxAge) => {
      expectError(
        await upload(app, key, EMAILS.join('\n'), { type: 'text/plain', query: `?max_age=${maxAge}` }),
        400,
        /max_age/,
      );
    },
  );
});
