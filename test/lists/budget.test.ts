import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { jsonList, upload, type VerifyApp } from './helpers.js';

// A list costs one point of the key's verification budget per distinct address, charged at creation; a cancel
// refunds the addresses never verified. No worker runs here: lists stay queued, so a cancel refunds them all.

let runtime: TestRuntime;
let app: VerifyApp;

beforeAll(async () => {
  runtime = await createTestRuntime({ VERIFY_RATE_LIMIT_HOURLY: '10', VERIFY_RATE_LIMIT_DAILY: '1000' });
  app = await buildVerifyApp(runtime);
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining']);
const listCount = async () =>
  (await runtime.database.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM verification_lists`))[0]!.n;

describe('the budget of a list', () => {
  it('charges each distinct address once, refuses a list that does not fit, refunds a cancel', async () => {
    const { verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string };
    const first = await jsonList(app, key, {
      emails: ['a@example.test', 'b@example.test', 'B@EXAMPLE.test', 'c@example.test', 'd@example.test'],
    });
    expect(first.statusCode).toBe(202);
    // 5 rows, 5 distinct (local parts keep their case): 5 points, and nothing more for the request itself.
    expect(first.json().data.unique).toBe(5);
    expect(first.headers['x-ratelimit-limit']).toBe('10');
    expect(remaining(first)).toBe(5);

    const lists = await listCount();
    const csv = `email\n${Array.from({ length: 6 }, (_, i) => `n${i}@example.test`).join('\n')}\n`;
    const refused = await upload(app, key, csv);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: true, message: 'Rate limit exceeded', code: 429 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(remaining(refused)).toBe(5);
    expect(await listCount()).toBe(lists);

    // A retried creation with the same Idempotency-Key is not charged again (the request costs its one point).
    const keyed = await jsonList(app, key, { emails: ['e@example.test'] }, { 'idempotency-key': 'k1' });
    expect(remaining(keyed)).toBe(4);
    const replay = await jsonList(app, key, { emails: ['e@example.test'] }, { 'idempotency-key': 'k1' });
    expect(replay.json().data.id).toBe(keyed.json().data.id);
    expect(remaining(replay)).toBe(3);

    // Cancelling the queued five-address list gives its five points back; the cancel itself costs nothing.
    const cancel = await app.inject({
      method: 'DELETE',
      url: `/lists/${first.json().data.id}`,
      headers: { 'x-api-key': key },
    });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json().data.status).toBe('cancelled');
    expect(cancel.headers['x-ratelimit-remaining']).toBeUndefined();
    // Deleting the cancelled list refunds nothing more.
    await app.inject({
      method: 'DELETE',
      url: `/lists/${first.json().data.id}`,
      headers: { 'x-api-key': key },
    });
    const after = await jsonList(app, key, { emails: ['f@example.test'] });
    expect(remaining(after)).toBe(3 + 5 - 1);
  });

  it('lets a key that spent its budget follow, download and cancel its list, at no cost', async () => {
    const { verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string };
    const emails = Array.from({ length: 10 }, (_, i) => `spent${i}@example.test`);
    const created = await jsonList(app, key, { emails });
    expect(remaining(created)).toBe(0);
    const id = created.json().data.id;
    const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    for (const url of ['/lists', `/lists/${id}`, `/lists/${id}/results`, `/lists/${id}/results?format=csv`]) {
      for (let i = 0; i < 3; i++) {
        const res = await get(url);
        expect({ url, status: res.statusCode }).toEqual({ url, status: 200 });
        expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
      }
    }
    // Verifying is still refused: the budget is spent.
    expect((await jsonList(app, key, { emails: ['more@example.test'] })).statusCode).toBe(429);
    const cancel = await app.inject({ method: 'DELETE', url: `/lists/${id}`, headers: { 'x-api-key': key } });
    expect(cancel.statusCode).toBe(200);
    // The cancel refunded the ten addresses never verified.
    expect(remaining(await jsonList(app, key, { emails: ['again@example.test'] }))).toBe(9);
  });

  it('refuses a list larger than the whole hourly budget with a 413 that says waiting will not help', async () => {
    const { verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string };
    // 12 rows, 11 distinct addresses: one more than the key's hourly budget of 10, with the whole budget unspent.
    const rows = Array.from({ length: 11 }, (_, i) => `big${i}@example.test`);
    const csv = `email\n${[...rows, 'big0@EXAMPLE.test'].join('\n')}\n`;
    const lists = await listCount();
    const refused = await upload(app, key, csv);
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toEqual({
      error: true,
      code: 413,
      message:
        "This list has 11 distinct addresses, more than this key's whole hourly verification budget of 10: it " +
        'cannot be accepted, however long you wait. Split it into lists of at most 10 distinct addresses',
    });
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(await listCount()).toBe(lists);
    // Nothing was charged for the addresses (the refused request costs its one point, as any rejected request),
    // and a list of exactly the budget still fits.
    expect(remaining(refused)).toBe(9);
    const whole = await jsonList(app, key, { emails: rows.slice(0, 9) });
    expect(whole.statusCode).toBe(202);
    expect(remaining(whole)).toBe(0);
  });

  it('charges another key of another owner separately', async () => {
    const { verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string };
    const res = await jsonList(app, key, { emails: ['x@example.test', 'y@example.test'] });
    expect(res.statusCode).toBe(202);
    expect(remaining(res)).toBe(8);
  });
});
