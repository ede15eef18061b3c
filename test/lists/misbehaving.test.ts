import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { get, jsonList, waitForStatus, type VerifyApp } from './helpers.js';

// Tarpits, endless replies, a mid-session 451 and a catch-all through the service: POST /verify, POST /bulk-verify
// and a list verified by real workers, against loopback servers. Each address gets its documented verdict; the
// tarpits end at VERIFY_SMTP_TIMEOUT_MS, never as valid; the 451 (after MAIL FROM was accepted) is retried by the
// list and ends valid.

const SLOW = '127.0.9.40';
const SLOWER = '127.0.9.41';
const TRICKLE = '127.0.9.42';
const ENDLESS = '127.0.9.43';
const DEFERS = '127.0.9.44';
const ACCEPT_ALL = '127.0.9.45';
const SMTP_TIMEOUT_MS = 1500;

let dns: DnsServer;
let world: MailWorld;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;
const deferred = new Map<string, number>();

const known = (address: string): string =>
  address.startsWith('alice@') ? '250 2.1.5 Ok' : '550 5.1.1 User unknown';

beforeAll(async () => {
  world = await startMailWorld({
    // Every reply two thirds of the timeout late: slow, but within it.
    [SLOW]: { kind: 'raw', delayMs: SMTP_TIMEOUT_MS * (2 / 3), rcpt: known },
    [SLOWER]: { kind: 'raw', rcpt: (a) => ({ after: SMTP_TIMEOUT_MS * 2, reply: known(a) }) },
    [TRICKLE]: { kind: 'raw', rcpt: (a) => ({ trickle: known(a), everyMs: 10 }) },
    [ENDLESS]: { kind: 'raw', rcpt: () => 'endless' },
    [DEFERS]: {
      kind: 'raw',
      rcpt: (address) => {
        const local = address.slice(0, address.indexOf('@'));
        if (local !== 'later') return '550 5.1.1 User unknown';
        const times = (deferred.get(local) ?? 0) + 1;
        deferred.set(local, times);
        return times === 1 ? '451 4.3.0 Temporary lookup failure, try again' : '250 2.1.5 Ok';
      },
    },
    [ACCEPT_ALL]: { kind: 'smtp', others: 'accept' },
  });
  dns = await startDnsServer({
    ...mailDomain('slow.test', SLOW),
    ...mailDomain('slower.test', SLOWER),
    ...mailDomain('trickle.test', TRICKLE),
    ...mailDomain('endless.test', ENDLESS),
    ...mailDomain('defers.test', DEFERS),
    ...mailDomain('acceptall.test', ACCEPT_ALL),
  });
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, world.port, {
      VERIFY_SMTP_TIMEOUT_MS: String(SMTP_TIMEOUT_MS),
      VERIFY_PROBE_TIMEOUT_MS: '30000',
      VERIFY_LIST_RETRY_DELAY_MS: '1000',
      VERIFY_LIST_RETRY_WINDOW_MS: '9000',
    }),
  );
  pool = await startWorkerPool(runtime, ['verify', 'verify-lists']);
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

const post = (url: string, body: unknown) =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    payload: JSON.stringify(body),
  });

// [address, status, reason]
const EXPECTED: Array<[string, string, string]> = [
  ['alice@slow.test', 'valid', 'accepted'],
  ['bob@slow.test', 'invalid', 'mailbox_not_found'],
  ['alice@slower.test', 'unknown', 'timeout'],
  ['alice@trickle.test', 'valid', 'accepted'],
  ['bob@trickle.test', 'invalid', 'mailbox_not_found'],
  ['alice@endless.test', 'unknown', 'connection_failed'],
  ['alice@acceptall.test', 'risky', 'catch_all'],
];

describe('misbehaving servers through the service', () => {
  it('POST /verify: tarpits and endless replies end unknown, slow and trickling servers are waited for', async () => {
    for (const [email, status, reason] of [EXPECTED[0]!, EXPECTED[2]!, EXPECTED[3]!, EXPECTED[5]!]) {
      const res = await post('/verify', { email, max_age: 0 });
      expect(res.statusCode).toBe(200);
      expect([email, res.json().data.status, res.json().data.reason]).toEqual([email, status, reason]);
    }
  }, 60_000);

  it('POST /bulk-verify: every address its documented verdict', async () => {
    const res = await post('/bulk-verify', { emails: EXPECTED.map(([email]) => email), max_age: 0 });
    expect(res.statusCode).toBe(200);
    const results = res.json().data as Array<{ email: string; status: string; reason: string }>;
    expect(results.map((r) => [r.email, r.status, r.reason])).toEqual(EXPECTED);
  }, 60_000);

  it('a list: the same verdicts, and a 451 to RCPT after MAIL FROM was accepted is retried and ends valid', async () => {
    const emails = [...EXPECTED.map(([email]) => email), 'later@defers.test', 'nobody@defers.test'];
    const created = await jsonList(app, key, { emails, max_age: 0 });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;
    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({ status: 'completed', total: emails.length, processed: emails.length });
    const results = (await get(app, key, `/lists/${id}/results`)).json().data.results as Array<{
      email: string;
      status: string;
      reason: string;
    }>;
    expect(results.map((r) => [r.email, r.status, r.reason])).toEqual([
      ...EXPECTED,
      ['later@defers.test', 'valid', 'accepted'],
      ['nobody@defers.test', 'invalid', 'mailbox_not_found'],
    ]);
    expect(deferred.get('later')).toBe(2);
  }, 90_000);
});
