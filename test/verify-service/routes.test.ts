import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { verifyJobId } from '../../shared/verification/service.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { type DnsServer, mailDomain, startDnsServer } from '../support/dns-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { createKeys, worldEnv } from './helpers.js';

// POST /verify and POST /bulk-verify through the HTTP app, with a real worker pool, Redis, DNS and SMTP servers.

const MAIN = '127.0.5.2';
const CATCH_ALL = '127.0.5.3';
const MANY = '127.0.5.4';
const TARPIT = '127.0.5.5';

const RESULT_FIELDS = [
  'email',
  'status',
  'syntax_valid',
  'mx_found',
  'smtp_valid',
  'is_disposable',
  'is_role_based',
  'is_free_provider',
  'is_catch_all',
  'domain',
  'mx_record',
  'score',
  'reason',
  'smtp_code',
  'smtp_message',
  'duration_ms',
  // issue 20
  'mx_records',
  'normalized_email',
  'did_you_mean',
  'verified_at',
  'cached',
].sort();

let dns: DnsServer;
let world: MailWorld;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: Awaited<ReturnType<typeof buildVerifyApp>>;
let keys: Record<string, string>;

beforeAll(async () => {
  world = await startMailWorld({
    [MAIN]: {
      kind: 'smtp',
      mailboxes: {
        alice: 'accept',
        carol: 'accept',
        info: 'accept',
        bob: '550 5.1.1 <bob@example.test>: Recipient address rejected: User unknown in virtual mailbox table',
        grey: '450 4.7.1 <grey@example.test>: Recipient address rejected: Greylisted, please try again later',
      },
    },
    [CATCH_ALL]: { kind: 'smtp', others: 'accept' },
    [MANY]: { kind: 'raw', rcpt: (a) => (a.startsWith('user') ? undefined : '550 5.1.1 No such user') },
    // Accepts the connection and never says a word: only the request deadline ends the wait.
    [TARPIT]: { kind: 'raw', greeting: null },
  });
  dns = await startDnsServer({
    ...mailDomain('example.test', MAIN),
    ...mailDomain('catchall.test', CATCH_ALL),
    ...mailDomain('many.test', MANY),
    ...mailDomain('tarpit.test', TARPIT),
  });
  // Long SMTP timeouts: a `timeout` result in these tests can only come from the request's deadline.
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, world.port, { VERIFY_SMTP_TIMEOUT_MS: '20000', VERIFY_PROBE_TIMEOUT_MS: '30000' }),
  );
  pool = await startWorkerPool(runtime, ['verify']);
  app = await buildVerifyApp(runtime);
  keys = await createKeys(runtime, { verify: ['verify'], writer: ['qa:write'] });
});

afterAll(async () => {
  await app?.close();
  // The mail world first: closing the tarpit ends the probe still waiting on it, so the workers drain at once.
  await world?.close();
  await pool?.close(5000);
  await runtime?.close();
  await dns?.close();
});

const verify = (body: unknown, key: string | null = keys.verify!) =>
  app.inject({
    method: 'POST',
    url: '/verify',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
const bulk = (body: unknown, key: string | null = keys.verify!, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/bulk-verify',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('POST /verify', () => {
  it('answers a deliverable address as valid, with every documented field', async () => {
    const res = await verify({ email: 'alice@example.test' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(Object.keys(body.data).sort()).toEqual(RESULT_FIELDS);
    expect(body.data).toMatchObject({
      email: 'alice@example.test',
      status: 'valid',
      syntax_valid: true,
      mx_found: true,
      smtp_valid: true,
      is_catch_all: false,
      domain: 'example.test',
      mx_record: 'mx.example.test',
      reason: 'accepted',
      smtp_code: 250,
    });
    expect(body.data.score).toBeGreaterThanOrEqual(80);
  });

  it('answers a refused mailbox as invalid, a role account and a catch-all domain as risky, greylisting as unknown', async () => {
    const bob = (await verify({ email: 'bob@example.test' })).json().data;
    expect(bob).toMatchObject({
      status: 'invalid',
      reason: 'mailbox_not_found',
      smtp_valid: false,
      smtp_code: 550,
    });
    const info = (await verify({ email: 'info@example.test' })).json().data;
    expect(info).toMatchObject({ status: 'risky', reason: 'role_based', is_role_based: true });
    const anyone = (await verify({ email: 'anyone@catchall.test' })).json().data;
    expect(anyone).toMatchObject({
      status: 'risky',
      reason: 'catch_all',
      is_catch_all: true,
      smtp_valid: true,
    });
    const grey = (await verify({ email: 'grey@example.test' })).json().data;
    expect(grey).toMatchObject({ status: 'unknown', reason: 'greylisted', smtp_code: 450 });
  });

  it('answers bad syntax and a domain that does not exist as invalid results, not errors', async () => {
    const bad = await verify({ email: 'not an address' });
    expect(bad.statusCode).toBe(200);
    expect(bad.json().data).toMatchObject({
      status: 'invalid',
      syntax_valid: false,
      reason: 'bad_syntax',
      score: 0,
    });
    const nx = (await verify({ email: 'someone@nowhere.test' })).json().data;
    expect(nx).toMatchObject({
      status: 'invalid',
      syntax_valid: true,
      mx_found: false,
      reason: 'nxdomain',
      mx_record: '',
    });
  });

  it('is one verify-domains job, answered by a worker, with an id from the request id and the address', async () => {
    const requestId = `single-${Date.now()}`;
    const res = await app.inject({
      method: 'POST',
      url: '/verify',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.verify!, 'x-request-id': requestId },
      payload: { email: 'carol@example.test' },
    });
    expect(res.statusCode).toBe(200);
    const job = await runtime.queues.queue('verify').getJob(verifyJobId(requestId, ['carol@example.test']));
    expect(job?.name).toBe('verify-domains');
    expect(job?.data).toMatchObject({ emails: ['carol@example.test'], requestId });
    expect(await job?.getState()).toBe('completed');
    expect(job?.returnvalue).toEqual([res.json().data]);
    expect(res.json().data).toMatchObject({ status: 'valid', reason: 'accepted' });
  });

  it('refuses bad bodies with 400 and the error body', async () => {
    const cases: [unknown, RegExp][] = [
      ['{"email": ', /JSON/i],
      [{}, /email is required/],
      [{ email: 42 }, /email must be a string/],
      [{ email: ['alice@example.test'] }, /email must be a string/],
      [{ email: null }, /email must be a string/],
      ['"alice@example.test"', /JSON object/],
    ];
    for (const [body, message] of cases) {
      const res = await verify(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ error: true, message: expect.stringMatching(message), code: 400 });
    }
  });

  it('refuses a body that is not JSON with 415', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/verify',
      headers: { 'content-type': 'application/xml', 'x-api-key': keys.verify! },
      payload: '<email>alice@example.test</email>',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ error: true, code: 415 });
  });

  it('needs a key (401) with the verify scope (403), checked before the body', async () => {
    const missing = await verify({ email: 'alice@example.test' }, null);
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ error: true, code: 401 });
    const unknown = await verify(
      { email: 'alice@example.test' },
      `agora_${'a'.repeat(12)}_${'b'.repeat(43)}`,
    );
    expect(unknown.statusCode).toBe(401);
    const writer = await verify({ email: 'alice@example.test' }, keys.writer!);
    expect(writer.statusCode).toBe(403);
    expect(writer.json()).toMatchObject({ error: true, code: 403 });
    expect((await verify('{bad json', null)).statusCode).toBe(401);
    expect((await bulk({ emails: 'x' }, keys.writer!)).statusCode).toBe(403);
    expect((await bulk({ emails: [] }, null)).statusCode).toBe(401);
  });
});

describe('POST /bulk-verify', () => {
  it('answers one result per entry in input order, duplicates and bad syntax included', async () => {
    const emails = [
      'bob@example.test',
      'alice@example.test',
      'not-an-address',
      'anyone@catchall.test',
      'alice@example.test',
      'someone@nowhere.test',
      '',
      'carol@example.test',
      'bob@example.test',
    ];
    const res = await bulk({ emails });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(body.count).toBe(emails.length);
    expect(body.data.map((r: { email: string }) => r.email)).toEqual(emails);
    expect(body.data.map((r: { status: string }) => r.status)).toEqual([
      'invalid',
      'valid',
      'invalid',
      'risky',
      'valid',
      'invalid',
      'invalid',
      'valid',
      'invalid',
    ]);
    expect(body.data[0]).toMatchObject({ reason: 'mailbox_not_found', syntax_valid: true });
    expect(body.data[2]).toMatchObject({ reason: 'bad_syntax', syntax_valid: false, mx_found: false });
    expect(body.data[6]).toMatchObject({ reason: 'bad_syntax', syntax_valid: false });
    expect(body.data[5]).toMatchObject({ reason: 'nxdomain', syntax_valid: true });
    expect(body.data[4]).toEqual(body.data[1]);
    for (const result of body.data) expect(Object.keys(result).sort()).toEqual(RESULT_FIELDS);
  });

  it('packs small domains into one job with an id from the request id and the addresses; bad syntax needs no job', async () => {
    const verifyQueue = runtime.queues.queue('verify');
    const before = await verifyQueue.getJobCountByTypes(
      'completed',
      'failed',
      'active',
      'waiting',
      'delayed',
    );
    const badOnly = await bulk({ emails: ['no-at-sign', 'two@@example.test', 'x@localhost'] });
    expect(badOnly.json().data.map((r: { reason: string }) => r.reason)).toEqual([
      'bad_syntax',
      'bad_syntax',
      'bad_syntax',
    ]);
    expect(await verifyQueue.getJobCountByTypes('completed', 'failed', 'active', 'waiting', 'delayed')).toBe(
      before,
    );

    const requestId = `bulk-ids-${Date.now()}`;
    const res = await bulk(
      { emails: ['carol@example.test', 'alice@example.test', 'carol@example.test', 'x@catchall.test'] },
      keys.verify!,
      {
        'x-request-id': requestId,
      },
    );
    expect(res.statusCode).toBe(200);
    expect(await verifyQueue.getJobCountByTypes('completed', 'failed', 'active', 'waiting', 'delayed')).toBe(
      before + 1,
    );
    // Whole domains, the biggest first; duplicates probed once.
    const emails = ['carol@example.test', 'alice@example.test', 'x@catchall.test'];
    const job = await verifyQueue.getJob(verifyJobId(requestId, emails));
    expect(job?.name).toBe('verify-domains');
    expect(job?.data).toMatchObject({ emails, requestId });
  });

  it('answers an empty batch with no results', async () => {
    const res = await bulk({ emails: [] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, count: 0, data: [] });
  });

  it('refuses bad bodies with 400: not an array, a non-string entry, more than 100 entries, bad JSON', async () => {
    const cases: [unknown, RegExp][] = [
      ['{"emails": [', /JSON/i],
      [{}, /emails is required/],
      [{ emails: 'alice@example.test' }, /emails must be an array/],
      [{ emails: { 0: 'alice@example.test' } }, /emails must be an array/],
      [{ emails: ['alice@example.test', 7] }, /emails\[1\] must be a string/],
      [{ emails: [null] }, /emails\[0\] must be a string/],
      [{ emails: Array.from({ length: 101 }, (_, i) => `u${i}@example.test`) }, /101 entries; at most 100/],
      [[], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const res = await bulk(body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json()).toEqual({ error: true, message: expect.stringMatching(message), code: 400 });
    }
    const hundred = await bulk({ emails: Array.from({ length: 100 }, (_, i) => `bad address ${i}`) });
    expect(hundred.statusCode).toBe(200);
    expect(hundred.json().count).toBe(100);
  });

  it('probes 100 addresses of one domain in 6 SMTP sessions, never more than the per-MX cap at once', async () => {
    const emails = Array.from({ length: 100 }, (_, i) => `user${i}@many.test`);
    const res = await bulk({ emails });
    expect(res.statusCode).toBe(200);
    const data = res.json().data as { email: string; status: string }[];
    expect(data.map((r) => r.email)).toEqual(emails);
    expect(data.every((r) => r.status === 'valid')).toBe(true);
    // ⌈(100 addresses + 1 catch-all probe) / 20 RCPT per session⌉ = 6.
    expect(world.logs[MANY]!.connections).toBe(6);
    expect(world.logs[MANY]!.maxOpen).toBeLessThanOrEqual(2);
    expect(world.logs[MANY]!.rcpts).toHaveLength(101);
  });

  it('answers the groups unfinished at the deadline as unknown with reason timeout, and the others in full', async () => {
    const hurried = await buildVerifyApp({
      ...runtime,
      config: { ...runtime.config, verify: { ...runtime.config.verify, bulkDeadlineMs: 1500 } },
    });
    try {
      const emails = ['alice@example.test', 'stuck@tarpit.test', 'info@tarpit.test', 'not-an-address'];
      const res = await hurried.inject({
        method: 'POST',
        url: '/bulk-verify',
        headers: { 'content-type': 'application/json', 'x-api-key': keys.verify! },
        payload: { emails },
      });
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(data.map((r: { email: string }) => r.email)).toEqual(emails);
      expect(data[0]).toMatchObject({ status: 'valid', reason: 'accepted' });
      expect(data[1]).toMatchObject({
        status: 'unknown',
        reason: 'timeout',
        syntax_valid: true,
        mx_found: false,
        smtp_code: null,
      });
      expect(data[2]).toMatchObject({ status: 'unknown', reason: 'timeout', is_role_based: true });
      expect(data[1].score).toBeGreaterThanOrEqual(20);
      expect(data[1].score).toBeLessThanOrEqual(39);
      expect(data[3]).toMatchObject({ status: 'invalid', reason: 'bad_syntax' });
      expect(world.logs[TARPIT]!.connections).toBeGreaterThanOrEqual(1);
    } finally {
      await hurried.close();
    }
  });
});

describe('rate limits', () => {
  it('counts each address of a batch against the key budget', async () => {
    const limited = await buildVerifyApp({
      ...runtime,
      config: {
        ...runtime.config,
        rateLimits: { ...runtime.config.rateLimits, enabled: true, verify: { hour: 10, day: 100 } },
      },
    });
    try {
      const send = (emails: string[]) =>
        limited.inject({
          method: 'POST',
          url: '/bulk-verify',
          headers: { 'content-type': 'application/json', 'x-api-key': keys.verify! },
          payload: { emails },
        });
      const first = await send(['a', 'b', 'c', 'd']);
      expect(first.statusCode).toBe(200);
      expect(first.headers['x-ratelimit-remaining']).toBe('6');
      const over = await send(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
      expect(over.statusCode).toBe(429);
      expect(over.json()).toMatchObject({ error: true, code: 429 });
    } finally {
      await limited.close();
    }
  });
});
