import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { verifySignature } from '../../shared/delivery/index.js';
import { ADMIN_TOKEN, signIn } from '../admin/helpers.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { startReceiver, type Answer, type Receiver } from '../delivery/receiver.js';
import { ANSWER, COMMENT, expectError, questionBody, writeWorld, type Writer } from '../qa-write/helpers.js';

// Webhooks end to end: the API writes, the qa-feed worker fans committed changes out, the deliveries worker POSTs
// them to real HTTP receivers on loopback (allowed only because WEBHOOK_ALLOW_PRIVATE is set). Retries wait 50 ms
// instead of minutes; three failed attempts in a row disable a subscription.

type Body = { id: string; event: string; created_at: string; data: Record<string, unknown> };

describe('webhooks', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let pool: WorkerPool;
  let owner: Writer;
  let stranger: Writer;
  let writer: Writer;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    world = await writeWorld({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_BACKOFF_MS: '50',
      WEBHOOK_DISPATCH_EVERY_MS: '100',
      WEBHOOK_DISABLE_AFTER_FAILURES: '3',
      ADMIN_TOKEN,
    });
    owner = await world.writer('hook-owner', ['webhooks']);
    stranger = await world.writer('stranger', ['webhooks']);
    writer = await world.writer('poster', ['qa:write']);
    pool = await startWorkerPool(world.runtime, ['deliveries', 'qa-feed']);
  });
  afterAll(async () => {
    await pool?.close(1000);
    await Promise.all(receivers.map((r) => r.close()));
    await world?.close();
  });

  const receiver = async (answer?: (index: number) => Answer) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };
  const call = (
    who: Writer | null,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
  ) => world.app.inject({ method, url, headers: who?.auth ?? {}, ...(payload ? { payload } : {}) });
  const subscribe = async (body: object, who: Writer = owner) => {
    const res = await call(who, 'POST', '/api/webhooks', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; secret: string; enabled: boolean };
  };
  const ask = async (extra: Record<string, unknown> = {}) =>
    (await call(writer, 'POST', '/api/questions', questionBody(extra))).json().data as { id: number };
  const bodies = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as Body);
  /** Waits until every change committed so far has been fanned out and (unless told) every delivery has ended. */
  const settle = async (options = { deliveries: true }) => {
    await vi.waitFor(
      async () => {
        const [row] = await world.runtime.database.query<{ behind: boolean; pending: number }>(sql`
          SELECT (SELECT coalesce(max(seq), 0) FROM qa_changes WHERE event IS NOT NULL) >
                 (SELECT last_seq FROM webhook_dispatch) AS behind,
                 (SELECT count(*)::int FROM deliveries WHERE state = 'pending') AS pending`);
        expect({ ...row, pending: options.deliveries ? row!.pending : 0 }).toEqual({
          behind: false,
          pending: 0,
        });
      },
      { timeout: 20_000, interval: 50 },
    );
  };

  it('manages subscriptions with the webhooks scope only; the secret is shown once; others see a 404', async () => {
    expectError(await call(null, 'GET', '/api/webhooks'), 401);
    expectError(await call(writer, 'GET', '/api/webhooks'), 403);
    expectError(await call(writer, 'POST', '/api/webhooks', { url: 'x' }), 403);

    const created = await call(owner, 'POST', '/api/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['question.created', 'answer.accepted', 'question.created'],
      tags: ['Stout'],
    });
    expect(created.statusCode).toBe(201);
    const sub = created.json().data;
    expect(created.headers.location).toBe(`/api/webhooks/${sub.id}`);
    expect(sub).toEqual({
      id: expect.any(Number),
      url: 'http://127.0.0.1:9/hook',
      events: ['question.created', 'answer.accepted'],
      tags: ['stout'],
      enabled: true,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
    });
    const { secret: _secret, ...shown } = sub;
    expect((await call(owner, 'GET', `/api/webhooks/${sub.id}`)).json().data).toEqual(shown);
    expect((await call(owner, 'GET', '/api/webhooks')).json().data.webhooks).toEqual([shown]);
    expect((await call(stranger, 'GET', '/api/webhooks')).json().data.webhooks).toEqual([]);
    expectError(await call(stranger, 'GET', `/api/webhooks/${sub.id}`), 404);
    expectError(await call(stranger, 'PATCH', `/api/webhooks/${sub.id}`, { enabled: false }), 404);
    expectError(await call(stranger, 'DELETE', `/api/webhooks/${sub.id}`), 404);
    expectError(await call(stranger, 'POST', `/api/webhooks/${sub.id}/ping`), 404);
    expectError(await call(stranger, 'GET', `/api/webhooks/${sub.id}/deliveries`), 404);

    const patched = await call(owner, 'PATCH', `/api/webhooks/${sub.id}`, {
      events: ['poll.closed'],
      tags: [],
    });
    expect(patched.json().data).toMatchObject({ events: ['poll.closed'], tags: [] });
    const paused = await call(owner, 'PATCH', `/api/webhooks/${sub.id}`, { enabled: false });
    expect(paused.json().data).toMatchObject({ enabled: false, disabled_reason: 'disabled by its owner' });
    expect(
      (await call(owner, 'PATCH', `/api/webhooks/${sub.id}`, { enabled: true })).json().data.enabled,
    ).toBe(true);

    expect((await call(owner, 'DELETE', `/api/webhooks/${sub.id}`)).statusCode).toBe(204);
    expectError(await call(owner, 'GET', `/api/webhooks/${sub.id}`), 404);
    expectError(await call(owner, 'DELETE', `/api/webhooks/${sub.id}`), 404);
  });

  it('refuses bad subscriptions with 400', async () => {
    const post = (body: object) => call(owner, 'POST', '/api/webhooks', body);
    expectError(await post({ url: 'http://127.0.0.1:9/', events: ['question.exploded'] }), 400);
    expectError(await post({ url: 'http://127.0.0.1:9/', events: [] }), 400);
    expectError(await post({ url: 'ftp://example.com/', events: ['question.created'] }), 400);
    expectError(await post({ url: 'not a url', events: ['question.created'] }), 400);
    expectError(await post({ url: 'http://u:p@example.com/', events: ['question.created'] }), 400);
    expectError(await post({ events: ['question.created'] }), 400);
    expectError(await post({ url: 'http://127.0.0.1:9/', events: ['question.created'], extra: 1 }), 400);
    expectError(await call(owner, 'PATCH', '/api/webhooks/1', {}), 400);
    expectError(await call(owner, 'GET', '/api/webhooks/0'), 400);
    expectError(await call(owner, 'GET', '/api/webhooks/abc'), 400);

    // Without WEBHOOK_ALLOW_PRIVATE, loopback and private targets are refused when subscribing.
    const guarded = await buildQaApp({
      ...world.runtime,
      config: { ...world.runtime.config, webhook: { ...world.runtime.config.webhook, allowPrivate: false } },
    });
    try {
      for (const url of ['http://127.0.0.1:8080/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook']) {
        const res = await guarded.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: owner.auth,
          payload: { url, events: ['question.created'] },
        });
        expect(expectError(res, 400)).toMatch(/loopback, private or reserved/);
      }
    } finally {
      await guarded.close();
    }
  });

  it('fires each event once per committed change, signed with the subscription secret; none for a rollback', async () => {
    const r = await receiver();
    const sub = await subscribe({
      url: r.url('/events'),
      events: [
        'question.created',
        'question.edited',
        'answer.created',
        'answer.accepted',
        'comment.created',
        'post.deleted',
      ],
    });
    const asker = await world.writer('asker-hooks', ['qa:write']);
    const question = (await call(asker, 'POST', '/api/questions', questionBody())).json().data;
    const answer = (
      await call(writer, 'POST', `/api/questions/${question.id}/answers`, { content: ANSWER })
    ).json().data;
    const comment = (
      await call(writer, 'POST', `/api/answers/${answer.id}/comments`, { content: COMMENT })
    ).json().data;
    await call(asker, 'POST', `/api/answers/${answer.id}/accept`);
    await call(asker, 'PATCH', `/api/questions/${question.id}`, { title: `${question.title} (edited)` });
    // A vote changes the feed but fires no subscribed event.
    await world.app.inject({
      method: 'PUT',
      url: `/api/questions/${question.id}/vote`,
      headers: writer.auth,
      payload: { value: 1 },
    });
    // Rolled back: no event, ever.
    await expect(
      world.runtime.database.db.transaction(async (tx) => {
        await tx.execute(
          sql`INSERT INTO questions (title, slug, content, author_id) VALUES ('Never committed', 'never', 'x', ${asker.id})`,
        );
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await world.runtime.database.query(sql`DELETE FROM answers WHERE id = ${answer.id}`);
    await settle();

    const got = bodies(r);
    expect(got.map((b) => `${b.event}:${b.data.type}:${b.data.id}`).sort()).toEqual(
      [
        `question.created:question:${question.id}`,
        `answer.created:answer:${answer.id}`,
        `comment.created:comment:${comment.id}`,
        `answer.accepted:answer:${answer.id}`,
        `question.edited:question:${question.id}`,
        `post.deleted:answer:${answer.id}`,
      ].sort(),
    );
    expect(new Set(got.map((b) => b.id)).size).toBe(got.length);
    for (const [i, request] of r.received.entries()) {
      expect(verifySignature(sub.secret, request.body, request.headers['x-agora-signature'] as string)).toBe(
        true,
      );
      expect(request.headers['x-agora-event']).toBe(got[i]!.event);
      expect(got[i]).toEqual({
        id: expect.stringMatching(/^evt_\d+$/),
        event: expect.any(String),
        created_at: expect.stringMatching(/Z$/),
        data: {
          type: expect.any(String),
          id: expect.any(Number),
          question_id: question.id,
          tags: ['brewing', 'yeast'],
        },
      });
    }
    expect(got.every((b) => !JSON.stringify(b).includes('Never committed'))).toBe(true);

    // Listed as deliveries of the subscription, all delivered.
    const list = (await call(owner, 'GET', `/api/webhooks/${sub.id}/deliveries?limit=100`)).json().data;
    expect(list.pagination.total_items).toBe(got.length);
    expect(list.deliveries.every((d: { state: string; attempts: number }) => d.state === 'delivered')).toBe(
      true,
    );
  });

  it('filters by tag, and a subscription only gets changes made after it', async () => {
    const before = await ask({ tags: ['stout'] });
    const r = await receiver();
    await subscribe({ url: r.url(), events: ['question.created', 'answer.created'], tags: ['stout'] });
    const stout = await ask({ tags: ['stout', 'brewing'] });
    await ask({ tags: ['lager'] });
    await call(writer, 'POST', `/api/questions/${before.id}/answers`, { content: ANSWER });
    await settle();
    expect(
      bodies(r)
        .map((b) => `${b.event}:${b.data.question_id}`)
        .sort(),
    ).toEqual([`question.created:${stout.id}`, `answer.created:${before.id}`].sort());
  });

  it('fires poll.closed once, with the first tally after the poll closed, with its question and tags', async () => {
    const r = await receiver();
    await subscribe({ url: r.url(), events: ['poll.closed'] });
    const question = await ask({ tags: ['ipa'] });
    const [poll] = await world.runtime.database.query<{ id: number }>(
      sql`INSERT INTO polls (question_id, title) VALUES (${question.id}, 'Best hop?') RETURNING id`,
    );
    const tally = () =>
      world.runtime.database.query(sql`UPDATE polls SET tallied_at = now() WHERE id = ${poll!.id}`);
    // Tallied while open (after votes): not closed.
    await tally();
    await world.runtime.database.query(sql`UPDATE polls SET closed_at = now() WHERE id = ${poll!.id}`);
    await tally();
    // Tallied again (a re-tally): not closed a second time.
    await tally();
    await settle();
    expect(bodies(r)).toEqual([
      {
        id: expect.stringMatching(/^evt_\d+$/),
        event: 'poll.closed',
        created_at: expect.any(String),
        data: { type: 'poll', id: poll!.id, question_id: question.id, tags: ['ipa'] },
      },
    ]);
  });

  it('retries a receiver that fails first, then delivers; pings and redelivers', async () => {
    const r = await receiver((i) => (i < 2 ? { status: 503 } : { status: 204 }));
    const sub = await subscribe({ url: r.url(), events: ['question.created'] });
    const question = await ask();
    await settle();
    expect(r.received).toHaveLength(3);
    const ids = new Set(r.received.map((x) => x.headers['x-agora-delivery']));
    expect(ids.size).toBe(1);
    expect(r.received.map((x) => x.headers['x-agora-attempt'])).toEqual(['1', '2', '3']);
    expect(JSON.parse(r.received[2]!.body).data.id).toBe(question.id);
    const [delivery] = (await call(owner, 'GET', `/api/webhooks/${sub.id}/deliveries`)).json().data
      .deliveries;
    expect(delivery).toMatchObject({
      event: 'question.created',
      state: 'delivered',
      attempts: 3,
      last_status: 204,
    });
    // The run of failures ended with the delivered attempt.
    expect((await call(owner, 'GET', `/api/webhooks/${sub.id}`)).json().data.consecutive_failures).toBe(0);

    const ping = await call(owner, 'POST', `/api/webhooks/${sub.id}/ping`);
    expect(ping.statusCode).toBe(202);
    const pingId = ping.json().data.delivery_id;
    await r.waitForRequests(4);
    const pinged = r.received[3]!;
    expect(JSON.parse(pinged.body)).toMatchObject({ event: 'ping', data: { subscription_id: sub.id } });
    expect(pinged.headers['x-agora-delivery']).toBe(pingId);
    await settle();

    const again = await call(owner, 'POST', `/api/webhooks/${sub.id}/deliveries/${pingId}/redeliver`);
    expect(again.statusCode, again.body).toBe(202);
    await r.waitForRequests(5);
    expect(r.received[4]!.headers['x-agora-delivery']).toBe(pingId);
    expect(r.received[4]!.body).toBe(pinged.body);

    const other = await subscribe({ url: r.url(), events: ['poll.closed'] }, stranger);
    expectError(
      await call(stranger, 'POST', `/api/webhooks/${other.id}/deliveries/${pingId}/redeliver`),
      404,
    );
    expectError(
      await call(
        owner,
        'POST',
        `/api/webhooks/${sub.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`,
      ),
      404,
    );
    expectError(await call(owner, 'POST', `/api/webhooks/${sub.id}/deliveries/nope/redeliver`), 404);
  });

  it('disables a subscription after a run of failed attempts; enabling it again resumes', async () => {
    let failing = true;
    const r = await receiver(() => (failing ? { status: 500 } : { status: 200 }));
    const sub = await subscribe({ url: r.url(), events: ['question.created'] });
    await ask();
    await vi.waitFor(
      async () =>
        expect((await call(owner, 'GET', `/api/webhooks/${sub.id}`)).json().data).toMatchObject({
          enabled: false,
          disabled_reason: '3 delivery attempts in a row failed',
        }),
      { timeout: 20_000, interval: 100 },
    );
    const deliveries = async () =>
      (await call(owner, 'GET', `/api/webhooks/${sub.id}/deliveries`)).json().data.pagination.total_items;
    expect(await deliveries()).toBe(1);
    await ask();
    await settle({ deliveries: false });
    // No delivery for an event of a disabled subscription, and the first one's retries stop: it settles as cancelled.
    expect(await deliveries()).toBe(1);
    await vi.waitFor(
      async () =>
        expect(
          (await call(owner, 'GET', `/api/webhooks/${sub.id}/deliveries`)).json().data.deliveries[0].state,
        ).toBe('cancelled'),
      { timeout: 20_000, interval: 100 },
    );

    failing = false;
    const enabled = await call(owner, 'PATCH', `/api/webhooks/${sub.id}`, { enabled: true });
    expect(enabled.json().data).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_at: null });
    const after = await ask();
    await vi.waitFor(
      () =>
        expect(bodies(r).some((b) => b.event === 'question.created' && b.data.id === after.id)).toBe(true),
      { timeout: 20_000, interval: 50 },
    );
    expect(await deliveries()).toBe(2);
  });

  it('stops a delivery waiting for a retry when its owner disables the subscription; redeliver resumes it', async () => {
    // The first attempt hangs until WEBHOOK_TIMEOUT_MS; the subscription is disabled meanwhile, so the retry that
    // the timeout schedules must not be sent.
    const r = await receiver((i) => (i === 0 ? 'hang' : { status: 200 }));
    const sub = await subscribe({ url: r.url(), events: ['question.created'] });
    await ask();
    await r.waitForRequests(1);
    const paused = await call(owner, 'PATCH', `/api/webhooks/${sub.id}`, { enabled: false });
    expect(paused.json().data.enabled).toBe(false);
    const log = async () =>
      (await call(owner, 'GET', `/api/webhooks/${sub.id}/deliveries`)).json().data.deliveries as {
        id: string;
        state: string;
        attempts: number;
      }[];
    await vi.waitFor(
      async () => expect((await log())[0]).toMatchObject({ state: 'cancelled', attempts: 1 }),
      {
        timeout: 60_000,
        interval: 100,
      },
    );
    expect(r.received).toHaveLength(1);

    // Enabling it again does not resume a cancelled delivery; an explicit redeliver does.
    await call(owner, 'PATCH', `/api/webhooks/${sub.id}`, { enabled: true });
    const [cancelled] = await log();
    const again = await call(owner, 'POST', `/api/webhooks/${sub.id}/deliveries/${cancelled!.id}/redeliver`);
    expect(again.statusCode, again.body).toBe(202);
    await r.waitForRequests(2);
    expect(r.received[1]!.headers['x-agora-delivery']).toBe(cancelled!.id);
    await vi.waitFor(async () => expect((await log())[0]).toMatchObject({ state: 'delivered' }), {
      timeout: 20_000,
      interval: 100,
    });
  }, 120_000);

  it('shows subscriptions in the admin panel, disabled ones first with their reason, user content escaped', async () => {
    const sub = await subscribe({ url: 'http://127.0.0.1:9/<b>bold</b>', events: ['poll.closed'] });
    await world.runtime.database.query(
      sql`UPDATE webhook_subscriptions SET consecutive_failures = 3 WHERE id = ${sub.id}`,
    );
    await vi.waitFor(
      async () =>
        expect((await call(owner, 'GET', `/api/webhooks/${sub.id}`)).json().data.enabled).toBe(false),
      { timeout: 10_000, interval: 50 },
    );
    const { jar } = await signIn(world.app);
    const res = await world.app.inject({ method: 'GET', url: '/admin/webhooks', headers: jar.header });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('http://127.0.0.1:9/&lt;b&gt;bold&lt;/b&gt;');
    expect(res.body).not.toContain('<b>bold</b>');
    const firstRow = res.body.slice(res.body.indexOf('<tbody>'));
    expect(firstRow.indexOf('disabled')).toBeLessThan(firstRow.indexOf('enabled'));
    expect(res.body).toContain('3 delivery attempts in a row failed');
    expect((await world.app.inject('/admin/webhooks')).statusCode).not.toBe(200);
  });
});
