import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestSends, subscribers } from '../../shared/db/schema/index.js';
import { MESSAGES } from '../../shared/newsletter/subscriptions.js';
import {
  addConfirmed,
  addQuestions,
  pathOf,
  sendsOf,
  startNewsletterWorld,
  until,
  type NewsletterWorld,
} from './helpers.js';

const at = (iso: string) => new Date(iso);

describe('digests: build, fan-out, send', () => {
  let world: NewsletterWorld;

  beforeAll(async () => {
    world = await startNewsletterWorld({ NEWSLETTER_BOUNCE_LIMIT: '2' });
    await world.startWorkers();
  });
  afterAll(async () => world.close());

  const build = (frequency: 'daily' | 'weekly' | 'monthly', period: string) =>
    world.runtime.queues.enqueueAndWait(
      'newsletter',
      'build-digest',
      { frequency, period },
      15_000,
    ) as Promise<{ subscribers: number }>;
  const send = (subscriberId: number, period: string, questionIds: number[], jobId: string) =>
    world.runtime.queues.enqueueAndWait(
      'newsletter',
      'send-digest',
      { subscriberId, period, questionIds },
      15_000,
      { jobId },
    );

  it('mails every confirmed subscriber of the frequency the period’s best new questions, with one-click unsubscribe', async () => {
    const period = 'daily-2024-03-05';
    const qs = await addQuestions(world.runtime, [
      { title: 'How long to age a barleywine', votes: 5, createdAt: at('2024-03-05T08:00:00Z') },
      { title: 'Why is my lager cloudy', votes: 10, createdAt: at('2024-03-05T23:59:00Z') },
      { title: 'Best yeast for a saison', votes: 1, createdAt: at('2024-03-05T00:00:00Z') },
      { title: 'Downvoted question', votes: -2, createdAt: at('2024-03-05T12:00:00Z') },
      { title: 'Asked the day before', votes: 50, createdAt: at('2024-03-04T23:59:59Z') },
    ]);
    const daily = await addConfirmed(
      world.runtime,
      ['d1@example.test', 'd2@example.test', 'd3@example.test'],
      'daily',
    );
    await addConfirmed(world.runtime, ['w1@example.test'], 'weekly');
    await world.runtime.database.db.insert(subscribers).values([
      { email: 'pending@example.test', frequency: 'daily', status: 'pending' },
      { email: 'gone@example.test', frequency: 'daily', status: 'unsubscribed' },
    ]);

    const result = await build('daily', period);
    expect(result.subscribers).toBe(3);
    await world.catcher.waitFor(3);
    const mails = world.catcher.messages.filter((m) => /daily digest/.test(m.headers.subject ?? ''));
    expect(mails.flatMap((m) => m.to).sort()).toEqual([
      'd1@example.test',
      'd2@example.test',
      'd3@example.test',
    ]);

    const mail = mails.find((m) => m.to[0] === 'd1@example.test')!;
    expect(mail.headers.subject).toBe('Agora daily digest: best new questions of 2024-03-05');
    expect(mail.headers['content-type']).toMatch(/^multipart\/alternative/);
    // Most votes first; the downvoted question and the one asked the day before are left out.
    const order = ['Why is my lager cloudy', 'How long to age a barleywine', 'Best yeast for a saison'];
    expect(order.map((t) => mail.text.indexOf(t))).toEqual(
      [...order.map((t) => mail.text.indexOf(t))].sort((a, b) => a - b),
    );
    expect(order.every((t) => mail.text.includes(t) && mail.html.includes(t))).toBe(true);
    expect(mail.text).not.toContain('Downvoted question');
    expect(mail.text).not.toContain('Asked the day before');
    expect(mail.links).toContain(`http://agora.test/api/questions/${qs[1]!.slug}`);

    const unsubscribe = /^<(http:\/\/agora\.test\/api\/newsletter\/unsubscribe\?token=[^>]+)>$/.exec(
      mail.headers['list-unsubscribe']!,
    )![1]!;
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(mail.links).toContain(unsubscribe);

    // The catcher has the message a moment before the worker records the 250.
    const sends = await until(async () => {
      const rows = await sendsOf(world.runtime, period);
      return rows.length === 3 && rows.every((s) => s.status === 'sent') && rows;
    }, 'three sends recorded');
    const d1 = sends.find((s) => s.subscriberId === daily[0]!.id)!;
    expect(d1.messageId).toBe(mail.headers['message-id']);

    // GET shows a button and changes nothing (link scanners fetch links); the RFC 8058 POST unsubscribes.
    const page = await world.app.inject({ url: pathOf(unsubscribe), headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<form method="post"');
    expect(await statusOf(daily[0]!.id)).toBe('confirmed');
    const oneClick = await world.app.inject({
      method: 'POST',
      url: pathOf(unsubscribe),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.statusCode).toBe(200);
    expect(oneClick.json()).toEqual({ success: true, message: MESSAGES.unsubscribedByLink });
    expect(await statusOf(daily[0]!.id)).toBe('unsubscribed');

    // Mail clients may post multipart/form-data (RFC 8058 §3.1); a second click is still a success.
    const d2link = /<([^>]+)>/.exec(
      mails.find((m) => m.to[0] === 'd2@example.test')!.headers['list-unsubscribe']!,
    )![1]!;
    const boundary = 'xYzZY';
    const multipart = {
      method: 'POST' as const,
      url: pathOf(d2link),
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
    };
    expect((await world.app.inject(multipart)).statusCode).toBe(200);
    expect((await world.app.inject(multipart)).statusCode).toBe(200);
    expect(await statusOf(daily[1]!.id)).toBe('unsubscribed');

    // A forged token unsubscribes nobody.
    const forged = await world.app.inject({
      method: 'POST',
      url: pathOf(unsubscribe).replace(/.{4}$/, 'AAAA'),
    });
    expect(forged.statusCode).toBe(400);
    expect(forged.json()).toMatchObject({ success: false, error: true, code: 400 });
  });

  it('never mails twice for one period: a second build and duplicated send jobs add nothing', async () => {
    const period = 'daily-2024-03-12';
    const [q] = await addQuestions(world.runtime, [
      { title: 'Dry hopping timing', votes: 3, createdAt: at('2024-03-12T10:00:00Z') },
    ]);
    const [sub] = await addConfirmed(world.runtime, ['dup@example.test'], 'daily');

    await build('daily', period);
    await world.catcher.waitForMail((m) => m.to.includes('dup@example.test'));
    await until(
      async () => (await sendsOf(world.runtime, period)).every((s) => s.status === 'sent'),
      'sends recorded',
    );
    const before = world.catcher.messages.length;

    // The same build delivered again: the send jobs' ids (digest-<period>-<subscriber>) already exist.
    const queue = world.runtime.queues.queue('newsletter');
    const first = await queue.getJob(`digest-${period}-${sub!.id}`);
    expect(await first!.getState()).toBe('completed');
    await build('daily', period);
    const after = await queue.getJob(`digest-${period}-${sub!.id}`);
    expect([after!.timestamp, await after!.getState()]).toEqual([first!.timestamp, 'completed']);

    // The same send delivered twice more under other job ids (as after the first job was removed).
    const twice = await Promise.all([
      send(sub!.id, period, [q!.id], 'again-1'),
      send(sub!.id, period, [q!.id], 'again-2'),
    ]);
    expect(twice).toEqual([{ skipped: 'already sent' }, { skipped: 'already sent' }]);
    // Give any stray job the time to run through the queue: a job queued after them finishes after them.
    await send(sub!.id, period, [q!.id], 'dup-last');
    expect(world.catcher.messages.length).toBe(before);
    expect(
      world.catcher.messages.filter(
        (m) => m.to.includes('dup@example.test') && m.headers.subject?.includes('2024-03-12'),
      ),
    ).toHaveLength(1);
    expect((await sendsOf(world.runtime, period)).filter((s) => s.subscriberId === sub!.id)).toHaveLength(1);
  });

  it('two copies of one send racing each other deliver one message', async () => {
    const period = 'daily-2024-03-13';
    const [q] = await addQuestions(world.runtime, [
      { title: 'Racing question', votes: 1, createdAt: at('2024-03-13T10:00:00Z') },
    ]);
    const [sub] = await addConfirmed(world.runtime, ['race@example.test'], 'daily');
    const results = await Promise.all([1, 2, 3].map((i) => send(sub!.id, period, [q!.id], `race-${i}`)));
    expect(results.filter((r) => 'sent' in (r as object))).toHaveLength(1);
    expect(world.catcher.messages.filter((m) => m.to.includes('race@example.test'))).toHaveLength(1);
  });

  it('does not send when an earlier attempt claimed the send and its outcome is unknown (at most once)', async () => {
    const period = 'daily-2024-03-14';
    const [q] = await addQuestions(world.runtime, [
      { title: 'Unknown outcome', votes: 1, createdAt: at('2024-03-14T10:00:00Z') },
    ]);
    const [sub] = await addConfirmed(world.runtime, ['claimed@example.test'], 'daily');
    await world.runtime.database.db
      .insert(digestSends)
      .values({ subscriberId: sub!.id, period, status: 'sending' });
    expect(await send(sub!.id, period, [q!.id], 'claimed-1')).toEqual({
      skipped: 'claimed earlier, outcome unknown',
    });
    expect(world.catcher.rcpts).not.toContain('claimed@example.test');
  });

  it('retries an SMTP 4xx with backoff and sends once accepted', async () => {
    const period = 'daily-2024-03-15';
    const [q] = await addQuestions(world.runtime, [
      { title: 'Greylisted', votes: 1, createdAt: at('2024-03-15T10:00:00Z') },
    ]);
    const [sub] = await addConfirmed(world.runtime, ['grey@example.test'], 'daily');
    let refusals = 0;
    world.catcher.setRcptPolicy((address) =>
      address === 'grey@example.test' && refusals++ < 2 ? '451 4.7.1 Greylisted, try again later' : 'accept',
    );
    const result = await send(sub!.id, period, [q!.id], 'grey-1');
    expect(result).toEqual({ sent: expect.any(String) });
    expect(world.catcher.rcpts.filter((r) => r === 'grey@example.test')).toHaveLength(3);
    expect(world.catcher.messages.filter((m) => m.to.includes('grey@example.test'))).toHaveLength(1);
    const [row] = await world.runtime.database.db
      .select()
      .from(digestSends)
      .where(and(eq(digestSends.subscriberId, sub!.id), eq(digestSends.period, period)));
    expect(row!.status).toBe('sent');
    world.catcher.setRcptPolicy(() => 'accept');
  });

  it('marks a subscriber bouncing after NEWSLETTER_BOUNCE_LIMIT permanent rejections, and stops mailing it', async () => {
    const [q1, q2, q3] = await addQuestions(world.runtime, [
      { title: 'Bounce one', votes: 1, createdAt: at('2024-03-16T10:00:00Z') },
      { title: 'Bounce two', votes: 1, createdAt: at('2024-03-17T10:00:00Z') },
      { title: 'Bounce three', votes: 1, createdAt: at('2024-03-18T10:00:00Z') },
    ]);
    const [sub] = await addConfirmed(world.runtime, ['bounce@example.test'], 'daily');
    world.catcher.setRcptPolicy((address) =>
      address === 'bounce@example.test' ? '550 5.1.1 No such user' : 'accept',
    );

    await expect(send(sub!.id, 'daily-2024-03-16', [q1!.id], 'bounce-1')).rejects.toThrow(/550/);
    expect(
      await world.runtime.database.db.select().from(subscribers).where(eq(subscribers.id, sub!.id)),
    ).toMatchObject([{ status: 'confirmed', bounceCount: 1 }]);
    // Not retried: one RCPT for that period.
    expect(world.catcher.rcpts.filter((r) => r === 'bounce@example.test')).toHaveLength(1);
    expect(
      (await sendsOf(world.runtime, 'daily-2024-03-16')).find((s) => s.subscriberId === sub!.id),
    ).toMatchObject({ status: 'failed' });

    await expect(send(sub!.id, 'daily-2024-03-17', [q2!.id], 'bounce-2')).rejects.toThrow(/550/);
    expect(await statusOf(sub!.id)).toBe('bouncing');

    expect(await send(sub!.id, 'daily-2024-03-18', [q3!.id], 'bounce-3')).toEqual({
      skipped: 'not a confirmed subscriber of this frequency',
    });
    expect(world.catcher.rcpts.filter((r) => r === 'bounce@example.test')).toHaveLength(2);
    world.catcher.setRcptPolicy(() => 'accept');
  });

  it('sends no digest for a period without new questions', async () => {
    const before = world.catcher.messages.length;
    const result = await build('weekly', 'weekly-2020-01-06');
    expect(result).toMatchObject({ subscribers: 0, skipped: 'no new questions' });
    expect(world.catcher.messages.length).toBe(before);
  });

  async function statusOf(id: number) {
    const [row] = await world.runtime.database.db
      .select({ status: subscribers.status })
      .from(subscribers)
      .where(eq(subscribers.id, id));
    return row?.status;
  }
});
