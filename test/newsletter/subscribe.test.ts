import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../shared/newsletter/subscriptions.js';
import { pathOf, startNewsletterWorld, subscriberByEmail, type NewsletterWorld } from './helpers.js';

const form = (fields: Record<string, string>) => ({
  method: 'POST' as const,
  url: '/api/newsletter-subscribe.php',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});
const json = (body: unknown) => ({
  method: 'POST' as const,
  url: '/api/newsletter-subscribe.php',
  payload: body as object,
});

describe('POST /api/newsletter-subscribe.php and the confirmation email', () => {
  let world: NewsletterWorld;

  beforeAll(async () => {
    world = await startNewsletterWorld();
    await world.startWorkers();
  });
  afterAll(async () => world.close());

  it('subscribes from a form: pending row, a confirmation email whose link confirms it', async () => {
    const res = await world.app.inject(
      form({ email: 'Ann@Example.test', action: 'subscribe', frequency: 'daily' }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, message: MESSAGES.subscribed });
    expect(await subscriberByEmail(world.runtime, 'ann@example.test')).toMatchObject({
      status: 'pending',
      frequency: 'daily',
    });

    await world.catcher.waitFor(1);
    const mail = world.catcher.messages.find((m) => m.to.includes('ann@example.test'))!;
    expect(mail.from).toBe('digest@agora.test');
    expect(mail.headers.subject).toBe('Confirm your daily Agora digest');
    expect(mail.html).toContain('Confirm my subscription');
    const link = mail.links.find((l) => l.includes('/api/newsletter/confirm?token='))!;
    expect(link.startsWith('http://agora.test/api/newsletter/confirm?token=')).toBe(true);
    expect(mail.html).toContain(link.replace(/&/g, '&amp;'));

    // Following the link (a person, or a mail scanner) only shows the button: nothing is confirmed by a GET.
    const shown = await world.app.inject({ url: pathOf(link), headers: { accept: 'text/html' } });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('<form method="post"');
    // The page holds the token and acts on it: no script, no framing, nothing from elsewhere, not cached.
    expect(shown.headers['content-security-policy']).toContain("default-src 'none'");
    expect(shown.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(await subscriberByEmail(world.runtime, 'ann@example.test')).toMatchObject({ status: 'pending' });

    const confirm = await world.app.inject({ method: 'POST', url: pathOf(link) });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.json()).toEqual({ success: true, message: MESSAGES.confirmed });
    const row = await subscriberByEmail(world.runtime, 'ann@example.test');
    expect(row).toMatchObject({ status: 'confirmed', frequency: 'daily' });
    expect(row!.confirmedAt).toBeInstanceOf(Date);

    // Following it again is harmless; a browser gets a page.
    const again = await world.app.inject({
      method: 'POST',
      url: pathOf(link),
      headers: { accept: 'text/html' },
    });
    expect(again.statusCode).toBe(200);
    expect(again.headers['content-type']).toMatch(/text\/html/);
    expect(again.body).toContain('Subscription confirmed');
  });

  it('accepts JSON; frequency defaults to weekly', async () => {
    const res = await world.app.inject(json({ email: 'bob@example.test', action: 'subscribe' }));
    expect(res.statusCode).toBe(200);
    expect(await subscriberByEmail(world.runtime, 'bob@example.test')).toMatchObject({
      status: 'pending',
      frequency: 'weekly',
    });
  });

  it('changes a confirmed frequency only when the new confirmation link is followed', async () => {
    await world.app.inject(json({ email: 'ann@example.test', action: 'subscribe', frequency: 'monthly' }));
    const mail = await world.catcher.waitForMail(
      (m) => m.to.includes('ann@example.test') && /monthly/.test(m.headers.subject!),
    );
    // Until the mailbox owner clicks, a stranger who knows the address changes nothing.
    expect(await subscriberByEmail(world.runtime, 'ann@example.test')).toMatchObject({
      status: 'confirmed',
      frequency: 'daily',
    });
    expect(mail.headers.subject).toBe('Confirm your monthly Agora digest');
    const res = await world.app.inject({ method: 'POST', url: pathOf(mail.links[0]!) });
    expect(res.statusCode).toBe(200);
    expect(await subscriberByEmail(world.runtime, 'ann@example.test')).toMatchObject({
      status: 'confirmed',
      frequency: 'monthly',
    });
  });

  it('answers unsubscribe identically for a subscriber and an unknown address, and unsubscribes the subscriber', async () => {
    await world.app.inject(json({ email: 'carl@example.test', action: 'subscribe', frequency: 'weekly' }));
    const known = await world.app.inject(form({ email: 'carl@example.test', action: 'unsubscribe' }));
    const unknown = await world.app.inject(form({ email: 'nobody@example.test', action: 'unsubscribe' }));
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.json()).toEqual(unknown.json());
    expect(known.json()).toEqual({ success: true, message: MESSAGES.unsubscribed });
    expect(await subscriberByEmail(world.runtime, 'carl@example.test')).toMatchObject({
      status: 'unsubscribed',
    });
    expect(await subscriberByEmail(world.runtime, 'nobody@example.test')).toBeUndefined();
  });

  it('answers subscribe identically for a new, a pending and a confirmed address', async () => {
    const fresh = await world.app.inject(
      json({ email: 'dora@example.test', action: 'subscribe', frequency: 'weekly' }),
    );
    const pending = await world.app.inject(
      json({ email: 'dora@example.test', action: 'subscribe', frequency: 'weekly' }),
    );
    const confirmed = await world.app.inject(
      json({ email: 'ann@example.test', action: 'subscribe', frequency: 'monthly' }),
    );
    expect([fresh.statusCode, pending.statusCode, confirmed.statusCode]).toEqual([200, 200, 200]);
    expect(pending.body).toBe(fresh.body);
    expect(confirmed.body).toBe(fresh.body);
  });

  it('refuses a confirmation link once the address has unsubscribed', async () => {
    await world.app.inject(json({ email: 'erin@example.test', action: 'subscribe', frequency: 'daily' }));
    const mail = await world.catcher.waitForMail((m) => m.to.includes('erin@example.test'));
    await world.app.inject(json({ email: 'erin@example.test', action: 'unsubscribe' }));
    const res = await world.app.inject({ method: 'POST', url: pathOf(mail.links[0]!) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'This link is not valid', error: true, code: 400 });
    expect(await subscriberByEmail(world.runtime, 'erin@example.test')).toMatchObject({
      status: 'unsubscribed',
    });
  });

  it('sends one confirmation for a burst of identical requests', async () => {
    for (let i = 0; i < 3; i++)
      await world.app.inject(json({ email: 'fay@example.test', action: 'subscribe', frequency: 'daily' }));
    await world.catcher.waitForMail((m) => m.to.includes('fay@example.test'));
    const fay = await subscriberByEmail(world.runtime, 'fay@example.test');
    const jobs = await world.runtime.queues
      .queue('newsletter')
      .getJobs(['completed', 'active', 'waiting', 'delayed', 'failed']);
    expect(
      jobs.filter((j) => j.name === 'send-confirmation' && j.data.subscriberId === fay!.id),
    ).toHaveLength(1);
    expect(world.catcher.messages.filter((m) => m.to.includes('fay@example.test'))).toHaveLength(1);
  });

  describe('bad input: 400 with success:false and the error fields', () => {
    const cases: [string, ReturnType<typeof form> | ReturnType<typeof json>, RegExp][] = [
      [
        'an invalid address',
        form({ email: 'not-an-address', action: 'subscribe' }),
        /email must be a valid email address/,
      ],
      [
        'an address without a dot in the domain',
        json({ email: 'a@localhost', action: 'subscribe' }),
        /valid email/,
      ],
      ['a missing email', json({ action: 'subscribe' }), /email is required/],
      ['a non-string email', json({ email: 42, action: 'subscribe' }), /email must be a string/],
      ['an unknown action', form({ email: 'a@example.test', action: 'delete' }), /Unknown action "delete"/],
      ['a missing action', form({ email: 'a@example.test' }), /action is required/],
      [
        'an unknown frequency',
        form({ email: 'a@example.test', action: 'subscribe', frequency: 'hourly' }),
        /Unknown frequency "hourly"/,
      ],
      ['a repeated form field', form({ email: 'a@example.test', action: 'subscribe' }), /./],
      ['an array body', json([1, 2]), /JSON object or a form/],
    ];
    // The repeated field case: two email fields make an array.
    cases[7]![1] = { ...form({}), payload: 'email=a%40example.test&email=b%40example.test&action=subscribe' };

    it.each(cases)('%s', async (_name, request, message) => {
      const res = await world.app.inject(request);
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body).toEqual({
        success: false,
        message: expect.stringMatching(message),
        error: true,
        code: 400,
      });
    });

    it('malformed JSON is a 400 in the same shape', async () => {
      const res = await world.app.inject({
        method: 'POST',
        url: '/api/newsletter-subscribe.php',
        headers: { 'content-type': 'application/json' },
        payload: '{"email":',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ success: false, error: true, code: 400 });
    });

    it('an unsupported content type is a 415 in the same shape', async () => {
      const res = await world.app.inject({
        method: 'POST',
        url: '/api/newsletter-subscribe.php',
        headers: { 'content-type': 'application/xml' },
        payload: '<email>a@example.test</email>',
      });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ success: false, error: true, code: 415 });
    });

    it('a tampered or missing confirmation token is a 400', async () => {
      const tampered = await world.app.inject('/api/newsletter/confirm?token=eyJzIjoxfQ.AAAA');
      expect(tampered.statusCode).toBe(400);
      expect(tampered.json()).toEqual({
        success: false,
        message: 'This link is not valid',
        error: true,
        code: 400,
      });
      const missing = await world.app.inject('/api/newsletter/confirm');
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ success: false, error: true, code: 400 });
    });
  });
});

describe('POST /api/newsletter-subscribe.php under the rate limiter', () => {
  let world: NewsletterWorld;
  beforeAll(async () => {
    world = await startNewsletterWorld({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_ANONYMOUS_HOURLY: '2' });
  });
  afterAll(async () => world.close());

  it('answers 429 in the two-shape body with Retry-After', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 3; i++) {
      last = await world.app.inject(json({ email: `r${i}@example.test`, action: 'unsubscribe' }));
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(last!.json()).toEqual({ success: false, message: expect.any(String), error: true, code: 429 });
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
  });
});
