import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { closeNow, poll, userWithKey } from './helpers.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

describe('POST /api/poll-vote.php', () => {
  let runtime: TestRuntime;
  let app: App;
  let ipCounter = 0;
  // Each anonymous voter of these tests is a distinct client behind the trusted proxy.
  const freshClient = () => ({ 'x-forwarded-for': `198.51.100.${++ipCounter}` });
  const vote = (payload: Record<string, unknown>, headers: Record<string, string> = freshClient()) =>
    app.inject({ method: 'POST', url: '/api/poll-vote.php', payload, headers });

  beforeAll(async () => {
    runtime = await createTestRuntime({ TRUST_PROXY: 'true', RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('records a JSON vote and answers the Poll result including it', async () => {
    const p = await poll(runtime);
    const res = await vote({ poll_id: p.id, option_id: p.options[1] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      results: {
        total_votes: 1,
        options: [
          { id: p.options[0], text: 'Cascade', votes: 0, percentage: 0 },
          { id: p.options[1], text: 'Citra', votes: 1, percentage: 100 },
          { id: p.options[2], text: 'Saaz', votes: 0, percentage: 0 },
        ],
      },
    });
  });

  it('accepts a form-encoded vote', async () => {
    const p = await poll(runtime);
    const res = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...freshClient() },
      payload: `poll_id=${p.id}&option_id=${p.options[0]}`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results.options[0].votes).toBe(1);
  });

  it('rounds percentages by largest remainder so they sum to exactly 100', async () => {
    const p = await poll(runtime);
    await vote({ poll_id: p.id, option_id: p.options[0] });
    await vote({ poll_id: p.id, option_id: p.options[1] });
    const res = await vote({ poll_id: p.id, option_id: p.options[2] });
    const { results } = res.json();
    expect(results.total_votes).toBe(3);
    expect(results.options.map((o: { percentage: number }) => o.percentage)).toEqual([33.4, 33.3, 33.3]);
  });

  it.each([
    ['missing poll_id', { option_id: 1 }],
    ['missing option_id', { poll_id: 1 }],
    ['a non-integer string', { poll_id: 'abc', option_id: 1 }],
    ['a fraction', { poll_id: 1.5, option_id: 1 }],
    ['a boolean', { poll_id: true, option_id: 1 }],
    ['null', { poll_id: null, option_id: 1 }],
    ['zero', { poll_id: 0, option_id: 1 }],
    ['a number past PostgreSQL integers', { poll_id: 99999999999, option_id: 1 }],
  ])('answers 400 with the error body for %s', async (_name, payload) => {
    const res = await vote(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: expect.any(String), code: 400 });
  });

  it('answers 400 for a form field that is not an integer', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...freshClient() },
      payload: 'poll_id=1&option_id=x',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(400);
  });

  it('answers 400 for malformed JSON and for an empty body', async () => {
    const bad = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { 'content-type': 'application/json' },
      payload: '{"poll_id": ',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: true, code: 400 });
    const empty = await app.inject({ method: 'POST', url: '/api/poll-vote.php' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ error: true, code: 400 });
  });

  it('answers 404 for an unknown poll and for an unknown option', async () => {
    const p = await poll(runtime);
    const noPoll = await vote({ poll_id: 2_000_000_000, option_id: p.options[0] });
    expect(noPoll.statusCode).toBe(404);
    expect(noPoll.json()).toEqual({ error: true, message: expect.stringMatching(/poll/i), code: 404 });
    const noOption = await vote({ poll_id: p.id, option_id: 2_000_000_000 });
    expect(noOption.statusCode).toBe(404);
    expect(noOption.json()).toEqual({ error: true, message: expect.stringMatching(/option/i), code: 404 });
  });

  it("answers 400 for another poll's option", async () => {
    const [a, b] = [await poll(runtime), await poll(runtime)];
    const res = await vote({ poll_id: a.id, option_id: b.options[0] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: expect.stringMatching(/does not belong/), code: 400 });
  });

  it('answers 403 on a closed poll and records nothing', async () => {
    const p = await poll(runtime);
    await closeNow(runtime, p.id);
    const res = await vote({ poll_id: p.id, option_id: p.options[0] });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: true, message: 'This poll is closed', code: 403 });
    const [row] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM poll_votes WHERE poll_id = ${p.id}`,
    );
    expect(row!.n).toBe(0);
  });

  it('refuses a second vote from the same client with 409 when the poll does not allow changes', async () => {
    const p = await poll(runtime);
    const client = freshClient();
    expect((await vote({ poll_id: p.id, option_id: p.options[0] }, client)).statusCode).toBe(200);
    for (const option of [p.options[1], p.options[0]]) {
      const again = await vote({ poll_id: p.id, option_id: option }, client);
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({
        error: true,
        message: expect.stringMatching(/already voted/),
        code: 409,
      });
    }
    const other = await vote({ poll_id: p.id, option_id: p.options[1] });
    expect(other.json().results.options.map((o: { votes: number }) => o.votes)).toEqual([1, 1, 0]);
  });

  it('moves the vote when the poll allows changes, keeping one vote per voter', async () => {
    const p = await poll(runtime, { allowChange: true });
    const client = freshClient();
    await vote({ poll_id: p.id, option_id: p.options[0] }, client);
    const moved = await vote({ poll_id: p.id, option_id: p.options[2] }, client);
    expect(moved.statusCode).toBe(200);
    expect(moved.json().results.total_votes).toBe(1);
    expect(moved.json().results.options.map((o: { votes: number }) => o.votes)).toEqual([0, 0, 1]);
    const same = await vote({ poll_id: p.id, option_id: p.options[2] }, client);
    expect(same.statusCode).toBe(200);
    expect(same.json().results.total_votes).toBe(1);
  });

  it("identifies a key's user across addresses, and two users behind one address apart", async () => {
    const p = await poll(runtime);
    const alice = await userWithKey(runtime, 'alice');
    const bob = await userWithKey(runtime, 'bob');
    const shared = { 'x-forwarded-for': '203.0.113.7' };
    expect(
      (await vote({ poll_id: p.id, option_id: p.options[0] }, { ...alice.auth, ...shared })).statusCode,
    ).toBe(200);
    const byBob = await vote({ poll_id: p.id, option_id: p.options[1] }, { ...bob.auth, ...shared });
    expect(byBob.statusCode).toBe(200);
    expect(byBob.json().results.total_votes).toBe(2);
    // An anonymous vote from the same address is a third voter: the client, not a user.
    expect((await vote({ poll_id: p.id, option_id: p.options[2] }, shared)).statusCode).toBe(200);
    const aliceElsewhere = await vote(
      { poll_id: p.id, option_id: p.options[2] },
      { ...alice.auth, 'x-forwarded-for': '192.0.2.99' },
    );
    expect(aliceElsewhere.statusCode).toBe(409);
  });

  it('answers 401 for an unknown key rather than counting the vote as anonymous', async () => {
    const p = await poll(runtime);
    const res = await vote(
      { poll_id: p.id, option_id: p.options[0] },
      { authorization: 'Bearer agora_nope' },
    );
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(401);
  });
});

describe('POST /api/poll-vote.php without a trusted proxy', () => {
  let runtime: TestRuntime;
  let app: App;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('ignores X-Forwarded-For, so a client cannot vote twice by forging it', async () => {
    const p = await poll(runtime);
    const first = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { 'x-forwarded-for': '10.0.0.1' },
      payload: { poll_id: p.id, option_id: p.options[0] },
    });
    expect(first.statusCode).toBe(200);
    const forged = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: { 'x-forwarded-for': '10.0.0.2' },
      payload: { poll_id: p.id, option_id: p.options[1] },
    });
    expect(forged.statusCode).toBe(409);
  });
});
