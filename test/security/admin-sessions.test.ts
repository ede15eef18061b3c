import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import {
  ADMIN_TOKEN,
  APP_SECRET,
  FORM,
  form,
  http,
  loginForm,
  signIn,
  startService,
  type Service,
} from './helpers.js';

/**
 * Issue 23, findings 2, 4, 5 and 10 (admin part), against a real Q&A process over HTTP. Each test speaks as its
 * own client through X-Forwarded-For (TRUST_PROXY trusts the loopback proxy, i.e. the test), so the login
 * throttle and the anonymous budget of one test do not leak into another.
 */

describe('admin sessions and the login throttle', { timeout: 180_000 }, () => {
  let runtime: TestRuntime;
  let qa: Service;
  const env = () => ({
    ...runtime.env,
    ADMIN_TOKEN,
    APP_SECRET,
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_ANONYMOUS_HOURLY: '45',
  });
  const as = (client: string, headers: Record<string, string> = {}) => ({
    'x-forwarded-for': client,
    ...headers,
  });
  const sessionRows = async () =>
    (await runtime.database.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM admin_sessions`))[0]!.n;

  /** signIn() as a given client address. */
  async function signInAs(client: string) {
    const { jar, csrf } = await loginForm(qa.base);
    const login = await http(`${qa.base}/admin/login`, {
      method: 'POST',
      headers: { ...FORM, ...jar.header, 'x-forwarded-for': client },
      body: form({ token: ADMIN_TOKEN, _csrf: csrf }),
    });
    expect(login.status).toBe(303);
    jar.take(login);
    const home = await http(`${qa.base}/admin`, { headers: jar.header });
    expect(home.status).toBe(200);
    return { jar, csrf: /name="_csrf" value="([^"]+)"/.exec(await home.text())![1]! };
  }

  beforeAll(async () => {
    runtime = await createTestRuntime();
    qa = await startService('qa', env());
  }, 120_000);

  afterAll(async () => {
    await qa?.stop();
    await runtime?.close();
  });

  it('logout ends the session on the server: a copy of the cookie no longer opens the panel', async () => {
    const { jar, csrf } = await signInAs('192.0.2.11');
    const stolen = { ...jar.header };
    const logout = await http(`${qa.base}/admin/logout`, {
      method: 'POST',
      headers: { ...FORM, ...jar.header },
      body: form({ _csrf: csrf }),
    });
    expect(logout.status).toBe(303);
    const replay = await http(`${qa.base}/admin`, { headers: stolen });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/admin/login');
    const api = await http(`${qa.base}/admin/queues/api/queues`, { headers: stolen });
    expect(api.status).toBe(401);
  });

  it('"sign out everywhere" ends every session at once', async () => {
    const first = await signInAs('192.0.2.12');
    const second = await signInAs('192.0.2.13');
    expect(await sessionRows()).toBeGreaterThanOrEqual(2);
    const everywhere = await http(`${qa.base}/admin/logout-everywhere`, {
      method: 'POST',
      headers: { ...FORM, ...first.jar.header },
      body: form({ _csrf: first.csrf }),
    });
    expect(everywhere.status).toBe(303);
    for (const browser of [first, second]) {
      const home = await http(`${qa.base}/admin`, { headers: browser.jar.header });
      expect(home.status).toBe(303);
    }
    expect(await sessionRows()).toBe(0);
  });

  it('40 parallel wrong tokens from one /64 get exactly 10 × 401, the rest 429 (charged before checked)', async () => {
    const { jar, csrf } = await loginForm(qa.base);
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        http(`${qa.base}/admin/login`, {
          method: 'POST',
          // Every try from another address of the same /64: one client, as far as the throttle is concerned.
          headers: { ...FORM, ...jar.header, 'x-forwarded-for': `2001:db8:5:6::${(i + 1).toString(16)}` },
          body: form({ token: `wrong-${i}`, _csrf: csrf }),
        }).then((r) => r.status),
      ),
    );
    const count = (status: number) => statuses.filter((s) => s === status).length;
    expect(count(401)).toBe(10);
    // The login throttle's 429 (the anonymous budget, 45/h per /64, is not reached).
    expect(count(429)).toBe(30);
    // Even the right token is refused now from that network; another network may still sign in.
    const right = await http(`${qa.base}/admin/login`, {
      method: 'POST',
      headers: { ...FORM, ...jar.header, 'x-forwarded-for': '2001:db8:5:6:ffff::1' },
      body: form({ token: ADMIN_TOKEN, _csrf: csrf }),
    });
    expect(right.status).toBe(429);
    await signInAs('2001:db8:5:7::1');
  });

  it('anonymous /admin requests spend the anonymous budget; a signed-in operator is not counted', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 47; i++)
      statuses.push((await http(`${qa.base}/admin/login`, { headers: as('192.0.2.21') })).status);
    expect(statuses.slice(0, 45).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(45)).toEqual([429, 429]);
    // Over its budget, the client cannot sign in either, even with the right token: refused before the form runs.
    const { jar: late, csrf: lateCsrf } = await loginForm(qa.base);
    const refused = await http(`${qa.base}/admin/login`, {
      method: 'POST',
      headers: { ...FORM, ...late.header, 'x-forwarded-for': '192.0.2.21' },
      body: form({ token: ADMIN_TOKEN, _csrf: lateCsrf }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.getSetCookie().some((c) => c.startsWith('agora_admin='))).toBe(false);

    const { jar } = await signInAs('192.0.2.22');
    for (let i = 0; i < 10; i++) {
      const board = await http(`${qa.base}/admin/queues/api/queues`, {
        headers: as('192.0.2.22', jar.header),
      });
      expect(board.status).toBe(200);
      expect(board.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('queue-board actions without an Origin need the session CSRF token', async () => {
    const { jar, csrf } = await signInAs('192.0.2.31');
    const url = `${qa.base}/admin/queues/api/queues/resume`;
    const bare = await http(url, { method: 'PUT', headers: jar.header });
    expect(bare.status).toBe(403);
    expect(await bare.json()).toMatchObject({ error: true, code: 403 });
    // The router decodes the path: a percent-encoded spelling reaches the same action and needs the same token.
    for (const spelling of ['/admin/queues/%61pi/queues/pause', '/admin/queues/api/queues/%70ause']) {
      const encoded = await http(`${qa.base}${spelling}`, { method: 'PUT', headers: jar.header });
      expect(encoded.status).toBe(403);
      expect(await encoded.json()).toMatchObject({ error: true, code: 403 });
    }
    const withToken = await http(url, { method: 'PUT', headers: { ...jar.header, 'x-csrf-token': csrf } });
    expect(withToken.status).toBe(200);
    const withOrigin = await http(url, { method: 'PUT', headers: { ...jar.header, origin: qa.base } });
    expect(withOrigin.status).toBe(200);
    const foreign = await http(url, {
      method: 'PUT',
      headers: { ...jar.header, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
  });

  it('the settings form stores known settings only (no constructor, toString or __proto__ rows)', async () => {
    const { jar, csrf } = await signInAs('192.0.2.41');
    const body = new URLSearchParams({ _csrf: csrf });
    for (const name of ['constructor', 'toString', '__proto__', 'app_secret']) {
      body.append('_settings', name);
      body.append(name, 'planted');
    }
    const res = await http(`${qa.base}/admin/settings`, {
      method: 'POST',
      headers: { ...FORM, ...jar.header },
      body,
    });
    expect(res.status).toBe(200);
    const keys = await runtime.database.query<{ key: string }>(sql`SELECT key FROM settings`);
    expect(keys.map((k) => k.key)).not.toEqual(expect.arrayContaining(['constructor']));
    expect(keys.map((k) => k.key).filter((k) => ['toString', '__proto__', 'app_secret'].includes(k))).toEqual(
      [],
    );
  });

  it('a changed admin credential ends the old sessions; production cookies are Secure', async () => {
    const { jar } = await signInAs('192.0.2.51');
    await qa.stop();
    const newToken = `${ADMIN_TOKEN}-rotated`;
    qa = await startService('qa', { ...env(), ADMIN_TOKEN: newToken, NODE_ENV: 'production' });
    // Start-up already dropped the rows of the old credential, not only the cookies that come back.
    expect(await sessionRows()).toBe(0);
    const old = await http(`${qa.base}/admin`, { headers: jar.header });
    expect(old.status).toBe(303);
    expect(old.headers.get('location')).toBe('/admin/login');

    // Without METRICS_TOKEN, production serves no /metrics on the public port.
    expect((await http(`${qa.base}/metrics`)).status).toBe(404);

    const page = await http(`${qa.base}/admin/login`);
    const cookies = page.headers.getSetCookie();
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) expect(cookie).toMatch(/;\s*Secure/i);
    const fresh = await signIn(qa.base, newToken);
    expect(fresh.jar.cookies.has('agora_admin')).toBe(true);
  });
});
