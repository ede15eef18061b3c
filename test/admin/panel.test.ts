import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { subscribers } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { ADMIN_TOKEN, csrfOf, form, FORM, Jar, onceOf, signIn } from './helpers.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

// Generous budgets: these tests are about the panel, not the anonymous plan's 60 requests an hour.
const LIMITS = { RATE_LIMIT_ANONYMOUS_HOURLY: '100000', RATE_LIMIT_ANONYMOUS_DAILY: '100000' };

describe('admin panel without ADMIN_TOKEN', () => {
  let runtime: TestRuntime;
  let app: App;
  beforeAll(async () => {
    runtime = await createTestRuntime(LIMITS);
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it.each([
    ['GET', '/admin'],
    ['GET', '/admin/keys'],
    ['GET', '/admin/queues'],
    ['POST', '/admin/login'],
  ])('%s %s answers 404 saying the panel is disabled', async (method, url) => {
    const response = await app.inject({ method: method as 'GET', url });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: true,
      code: 404,
      message: expect.stringMatching(/disabled.*ADMIN_TOKEN/),
    });
  });
});

describe('admin panel', () => {
  let runtime: TestRuntime;
  let app: App;
  beforeAll(async () => {
    runtime = await createTestRuntime({ ...LIMITS, ADMIN_TOKEN });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  describe('login', () => {
    it('sends a visitor without a session to the login form', async () => {
      for (const url of ['/admin', '/admin/keys', '/admin/settings', '/admin/newsletter', '/admin/queues']) {
        const response = await app.inject({ method: 'GET', url });
        expect(response.statusCode, url).toBe(303);
        expect(response.headers.location).toBe('/admin/login');
      }
      const page = await app.inject({ method: 'GET', url: '/admin/login' });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('name="token"');
    });

    it('refuses the queue API and form posts without a session (401)', async () => {
      const api = await app.inject({ method: 'GET', url: '/admin/queues/api/queues' });
      expect(api.statusCode).toBe(401);
      expect(api.json()).toMatchObject({ error: true, code: 401 });
      const post = await app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: FORM,
        payload: form({ username: 'x' }),
      });
      expect(post.statusCode).toBe(401);
    });

    it('sets a signed HttpOnly SameSite=Strict session cookie on the right token', async () => {
      const jar = new Jar();
      const loginPage = await app.inject({ method: 'GET', url: '/admin/login' });
      jar.take(loginPage);
      const response = await app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { ...FORM, ...jar.header },
        payload: form({ token: ADMIN_TOKEN, _csrf: csrfOf(loginPage.body) }),
      });
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/admin');
      const session = response.cookies.find((c) => c.name === 'agora_admin');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
      expect(session!.value).not.toContain(ADMIN_TOKEN);
      jar.take(response);
      const home = await app.inject({ method: 'GET', url: '/admin', headers: jar.header });
      expect(home.statusCode).toBe(200);
      expect(home.headers['cache-control']).toBe('no-store');
      expect(home.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(home.body).toContain('Active API keys');
    });

    it('refuses a wrong token (401) and a login form without its CSRF token (403)', async () => {
      const jar = new Jar();
      const loginPage = await app.inject({ method: 'GET', url: '/admin/login' });
      jar.take(loginPage);
      const wrong = await app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { ...FORM, ...jar.header },
        payload: form({ token: 'not-the-token', _csrf: csrfOf(loginPage.body) }),
      });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.body).toContain('Wrong admin token');
      expect(wrong.cookies.find((c) => c.name === 'agora_admin')).toBeUndefined();

      const noCsrf = await app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { ...FORM, ...jar.header },
        payload: form({ token: ADMIN_TOKEN }),
      });
      expect(noCsrf.statusCode).toBe(403);
      // The form token is bound to the pre-login cookie: without that cookie it is worthless.
      const noCookie = await app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: FORM,
        payload: form({ token: ADMIN_TOKEN, _csrf: csrfOf(loginPage.body) }),
      });
      expect(noCookie.statusCode).toBe(403);
    });

    it('ignores a tampered or foreign session cookie', async () => {
      const { jar } = await signIn(app);
      const value = jar.cookies.get('agora_admin')!;
      const [payload, signature] = value.split('.');
      const forged = JSON.stringify({
        ...JSON.parse(Buffer.from(payload!, 'base64url').toString()),
        exp: 9_999_999_999,
      });
      const tampered = `${Buffer.from(forged).toString('base64url')}.${signature}`;
      const response = await app.inject({
        method: 'GET',
        url: '/admin',
        headers: { cookie: `agora_admin=${tampered}` },
      });
      expect(response.statusCode).toBe(303);

      // A panel with another ADMIN_TOKEN (a rotated token) does not accept sessions made under the old one.
      const rotated = await buildQaApp({
        ...runtime,
        config: { ...runtime.config, adminToken: 'a-rotated-admin-token-000000' },
      });
      try {
        const old = await rotated.inject({ method: 'GET', url: '/admin', headers: jar.header });
        expect(old.statusCode).toBe(303);
      } finally {
        await rotated.close();
      }
    });

    it('logs out: the cookie is cleared and the session no longer opens pages', async () => {
      const { jar, csrf } = await signIn(app);
      const out = await app.inject({
        method: 'POST',
        url: '/admin/logout',
        headers: { ...FORM, ...jar.header },
        payload: form({ _csrf: csrf }),
      });
      expect(out.statusCode).toBe(303);
      jar.take(out);
      expect(jar.cookies.has('agora_admin')).toBe(false);
      expect((await app.inject({ method: 'GET', url: '/admin', headers: jar.header })).statusCode).toBe(303);
    });
  });

  describe('CSRF', () => {
    it('refuses a form post without the token, with another session’s token, or from another origin', async () => {
      const a = await signIn(app);
      const b = await signIn(app);
      const post = (headers: Record<string, string>, fields: Record<string, string>) =>
        app.inject({
          method: 'POST',
          url: '/admin/settings',
          headers: { ...FORM, ...headers },
          payload: form({ _settings: 'ai_enabled', ai_enabled: 'on', ...fields }),
        });
      expect((await post(a.jar.header, {})).statusCode).toBe(403);
      expect((await post(a.jar.header, { _csrf: b.csrf })).statusCode).toBe(403);
      expect(
        (await post({ ...a.jar.header, origin: 'https://evil.example' }, { _csrf: a.csrf })).statusCode,
      ).toBe(403);
      expect(await settingsRepository(runtime.database.db).get('ai_enabled')).toBe(false);
      expect((await post(a.jar.header, { _csrf: a.csrf })).statusCode).toBe(200);
      expect(await settingsRepository(runtime.database.db).get('ai_enabled')).toBe(true);
      await settingsRepository(runtime.database.db).set('ai_enabled', false);
    });
  });

  describe('API keys', () => {
    it('creates a key shown once, which then authenticates API requests until it is revoked', async () => {
      const { jar, csrf } = await signIn(app);
      const keysPage = await app.inject({ method: 'GET', url: '/admin/keys', headers: jar.header });
      const fields = {
        _csrf: csrf,
        _once: onceOf(keysPage.body),
        username: 'panel-user',
        create_user: '1',
        plan: 'premium',
        scopes: ['qa:write', 'verify'],
        name: 'ci',
      };
      const create = () =>
        app.inject({
          method: 'POST',
          url: '/admin/keys',
          headers: { ...FORM, ...jar.header },
          payload: form(fields),
        });
      const created = await create();
      expect(created.statusCode).toBe(201);
      const key = /id="new-key"[^>]*>\s*([^<\s]+)/.exec(created.body)?.[1] ?? '';
      expect(key).toMatch(/^agora_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
      // Its webhook secret is shown beside it, once.
      const secret = /id="new-webhook-secret"[^>]*>\s*([^<\s]+)/.exec(created.body)?.[1] ?? '';
      expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);

      // The same form again (a reload of the result page): no second key, and the first is not shown again.
      const resubmitted = await create();
      expect(resubmitted.statusCode).toBe(409);
      expect(resubmitted.body).not.toContain('new-key');
      expect(resubmitted.body).not.toContain(secret);
      expect(resubmitted.body.match(/action="\/admin\/keys\/\d+\/revoke"/g)).toHaveLength(1);

      const bearer = { authorization: `Bearer ${key}` };
      expect((await app.inject({ method: 'GET', url: '/api/categories', headers: bearer })).statusCode).toBe(
        200,
      );

      const list = await app.inject({ method: 'GET', url: '/admin/keys', headers: jar.header });
      expect(list.body).not.toContain(key);
      expect(list.body).not.toContain(secret);
      expect(list.body).toContain(`agora_${key.split('_')[1]}_…`);
      expect(list.body).toMatch(/panel-user[\s\S]*premium[\s\S]*qa:write[\s\S]*verify/);

      const id = /action="\/admin\/keys\/(\d+)\/revoke"/.exec(list.body)?.[1];
      const revoke = () =>
        app.inject({
          method: 'POST',
          url: `/admin/keys/${id}/revoke`,
          headers: { ...FORM, ...jar.header },
          payload: form({ _csrf: csrf }),
        });
      const revoked = await revoke();
      expect(revoked.statusCode).toBe(200);
      expect(revoked.body).toContain(`Key ${id} revoked`);
      const refused = await app.inject({ method: 'GET', url: '/api/categories', headers: bearer });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toMatchObject({ error: true, code: 401 });
      expect((await revoke()).statusCode).toBe(404);
    });

    it('answers a key id past int4 as unknown (404) and one not in decimal digits as a 400, never a 500', async () => {
      const { jar, csrf } = await signIn(app);
      const revoke = (id: string) =>
        app.inject({
          method: 'POST',
          url: `/admin/keys/${id}/revoke`,
          headers: { ...FORM, ...jar.header },
          payload: form({ _csrf: csrf }),
        });
      for (const id of ['2147483648', '99999999999', '9007199254740991'])
        expect({ id, status: (await revoke(id)).statusCode }).toEqual({ id, status: 404 });
      for (const id of ['1e3', '0x10', '1.5', '-1', '0', '9'.repeat(30)])
        expect({ id, status: (await revoke(id)).statusCode }).toEqual({ id, status: 400 });
    });

    it('rejects bad input with a 400 page and escapes what it shows', async () => {
      const { jar, csrf } = await signIn(app);
      const post = async (fields: Record<string, string | string[]>) => {
        const keysPage = await app.inject({ method: 'GET', url: '/admin/keys', headers: jar.header });
        return app.inject({
          method: 'POST',
          url: '/admin/keys',
          headers: { ...FORM, ...jar.header },
          payload: form({ _csrf: csrf, _once: onceOf(keysPage.body), ...fields }),
        });
      };
      expect((await post({ username: '<script>', scopes: 'qa:write' })).statusCode).toBe(400);
      expect((await post({ username: 'panel-user', plan: 'gold', scopes: 'qa:write' })).statusCode).toBe(400);
      expect((await post({ username: 'panel-user', scopes: 'root' })).statusCode).toBe(400);
      expect((await post({ username: 'panel-user' })).statusCode).toBe(400);
      const unknown = await post({ username: 'nobody-here', scopes: 'qa:write' });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.body).toContain('No user named');

      const label = '<img src=x onerror=alert(1)>';
      const created = await post({
        username: 'panel-user',
        create_user: '1',
        scopes: 'qa:write',
        name: label,
      });
      expect(created.statusCode).toBe(201);
      expect(created.body).not.toContain(label);
      expect(created.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    });
  });

  describe('pages', () => {
    it('turns AI on and off from the settings form', async () => {
      const { jar, csrf } = await signIn(app);
      const settings = settingsRepository(runtime.database.db);
      const save = (fields: Record<string, string>) =>
        app.inject({
          method: 'POST',
          url: '/admin/settings',
          headers: { ...FORM, ...jar.header },
          payload: form({ _csrf: csrf, _settings: 'ai_enabled', ...fields }),
        });
      expect((await save({ ai_enabled: 'on' })).body).toContain('ai_enabled = true');
      expect(await settings.get('ai_enabled')).toBe(true);
      // An unticked checkbox is absent from the form: that means off.
      expect((await save({})).body).toContain('ai_enabled = false');
      expect(await settings.get('ai_enabled')).toBe(false);
      const page = await app.inject({ method: 'GET', url: '/admin/settings', headers: jar.header });
      expect(page.body).toContain('RATE_LIMIT_ENABLED');
    });

    it('counts newsletter subscribers by frequency and state', async () => {
      const rows = [
        ...Array.from({ length: 3 }, (_, i) => ({
          email: `d${i}@example.com`,
          frequency: 'daily' as const,
          status: 'confirmed' as const,
        })),
        { email: 'w1@example.com', frequency: 'weekly' as const, status: 'pending' as const },
        { email: 'm1@example.com', frequency: 'monthly' as const, status: 'unsubscribed' as const },
        { email: 'm2@example.com', frequency: 'monthly' as const, status: 'confirmed' as const },
      ];
      await runtime.database.db.insert(subscribers).values(rows);
      const { jar } = await signIn(app);
      const page = await app.inject({ method: 'GET', url: '/admin/newsletter', headers: jar.header });
      expect(page.statusCode).toBe(200);
      const cell = (f: string, s: string) =>
        new RegExp(`data-frequency="${f}" data-state="${s}">(\\d+)<`).exec(page.body)?.[1];
      expect(cell('daily', 'confirmed')).toBe('3');
      expect(cell('weekly', 'pending')).toBe('1');
      expect(cell('monthly', 'unsubscribed')).toBe('1');
      expect(cell('monthly', 'confirmed')).toBe('1');
      expect(cell('weekly', 'confirmed')).toBe('0');
    });

    it('serves the queue board and its API behind the session', async () => {
      const { jar } = await signIn(app);
      const board = await app.inject({ method: 'GET', url: '/admin/queues', headers: jar.header });
      expect(board.statusCode).toBe(200);
      expect(board.headers['content-type']).toMatch(/^text\/html/);
      const api = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: jar.header });
      expect(api.statusCode).toBe(200);
      const names = (api.json() as { queues: { name: string }[] }).queues.map((q) => q.name);
      expect(names).toEqual(expect.arrayContaining(['ping', 'verify', 'ai', 'newsletter', 'polls']));
    });

    it("answers the queue board's refusals with the one error body, never a 500", async () => {
      const { jar } = await signIn(app);
      const refused = async (url: string, status: number) => {
        const res = await app.inject({ method: 'GET', url, headers: jar.header });
        expect(res.statusCode, res.body).toBe(status);
        expect(res.json()).toEqual({ error: true, message: expect.any(String), code: status });
        return res.json().message as string;
      };
      // bull-board decodes the already decoded query again
      for (const value of ['%25', '%25zz', '%ff'])
        await refused(`/admin/queues/api/queues?activeQueue=${value}`, 400);
      expect(await refused('/admin/queues/api/queues?activeQueue=ping&status=bogus', 400)).toMatch(/status/);
      expect(await refused('/admin/queues/api/queues/nosuch/1', 404)).toMatch(/queue not found/i);
      expect(await refused('/admin/queues/api/queues/ping/nosuch', 404)).toMatch(/job not found/i);
      // Paging past what Redis ranges hold was a Redis error (a 500): bounded, a 400.
      for (const paging of [
        'page=1&jobsPerPage=18446744073709551616',
        'page=4611686018427387904&jobsPerPage=4',
        'page=1e300&jobsPerPage=1',
        'page=0x10',
        'jobsPerPage=1001',
      ])
        expect(
          await refused(`/admin/queues/api/queues?activeQueue=ping&status=failed&${paging}`, 400),
        ).toMatch(/[pP]age must be an integer from 1 to/);
      expect(
        (
          await app.inject({
            url: '/admin/queues/api/queues?activeQueue=ping&status=failed&page=3&jobsPerPage=50',
            headers: jar.header,
          })
        ).statusCode,
      ).toBe(200);
    });

    it("refuses the queue board's job actions that BullMQ refuses with a 4xx, never a 500", async () => {
      const { jar, csrf } = await signIn(app);
      const act = (method: 'POST' | 'PUT', url: string, payload?: object) =>
        app.inject({
          method,
          url: `/admin/queues/api/queues/ping/${url}`,
          headers: { ...jar.header, 'x-csrf-token': csrf, 'content-type': 'application/json' },
          payload: JSON.stringify(payload ?? {}),
        });
      // Options BullMQ checks only while adding the job: a custom id that is an integer or holds ':', a priority
      // past 2^21 - 1, a float priority.
      for (const options of [
        { jobId: '123' },
        { jobId: 'a:b' },
        { priority: 99_999_999_999 },
        { priority: 1.5 },
        // Wrong types BullMQ would store (a Redis error, or a job that breaks its worker), unknown options.
        { attempts: 'x' },
        { delay: 'x' },
        { deduplication: { id: 'x', ttl: 'y' } },
        { removeOnComplete: 'x' },
        { bogus: 1 },
      ]) {
        const added = await act('POST', 'add', { name: 'fuzz', data: {}, options });
        expect({ options, status: added.statusCode }).toEqual({ options, status: 400 });
        expect(added.json()).toEqual({
          error: true,
          code: 400,
          message: expect.stringMatching(/^Invalid job options: /),
        });
      }
      // A delay past the double range parsed as Infinity, which Redis cannot store (a Lua error, a 500).
      const infinite = await app.inject({
        method: 'POST',
        url: '/admin/queues/api/queues/ping/add',
        headers: { ...jar.header, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        payload: '{"name": "fuzz", "data": {}, "options": {"delay": 1e309}}',
      });
      expect(infinite.statusCode).toBe(400);
      expect(infinite.json().message).toMatch(/options\.delay is a number out of range/);
      const fine = await act('POST', 'add', {
        name: 'fuzz',
        data: {},
        options: {
          jobId: 'board-options-test',
          delay: 60_000,
          attempts: 2,
          removeOnComplete: true,
          backoff: { type: 'fixed', delay: 10 },
        },
      });
      expect(fine.statusCode, fine.body).toBe(200);
      await act('PUT', 'board-options-test/clean');
      // A job that is waiting, not delayed, cannot be promoted: a conflict with its state.
      const added = await act('POST', 'add', {
        name: 'fuzz',
        data: {},
        options: { jobId: 'board-promote-test' },
      });
      expect(added.statusCode).toBe(200);
      const promoted = await act('PUT', 'board-promote-test/promote');
      expect(promoted.statusCode).toBe(409);
      expect(promoted.json()).toEqual({
        error: true,
        code: 409,
        message: expect.stringMatching(/not in the delayed state/),
      });
      await act('PUT', 'board-promote-test/clean');
    });
  });

  it('answers 429 after too many failed sign-ins from one address', async () => {
    const jar = new Jar();
    const loginPage = await app.inject({
      method: 'GET',
      url: '/admin/login',
      remoteAddress: '10.9.8.7',
    } as never);
    jar.take(loginPage);
    const attempt = (token: string) =>
      app.inject({
        method: 'POST',
        url: '/admin/login',
        remoteAddress: '10.9.8.7',
        headers: { ...FORM, ...jar.header },
        payload: form({ token, _csrf: csrfOf(loginPage.body) }),
      } as never);
    for (let i = 0; i < 10; i++) expect((await attempt('wrong')).statusCode).toBe(401);
    const blocked = await attempt(ADMIN_TOKEN);
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
  });
});
