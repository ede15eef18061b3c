import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import { loadConfig } from '../../shared/config.js';
import { usersRepository } from '../../shared/db/repositories/users.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';
import { freePort } from '../support/ports.js';

/** GET /verify/self-check against real loopback peers: an SMTP server, a tarpit, a refusing server, a DNS zone. */

type App = Awaited<ReturnType<typeof buildVerifyApp>>;

describe('GET /verify/self-check', () => {
  let world: MailWorld;
  let dns: DnsServer;
  const runtimes: TestRuntime[] = [];
  const apps: App[] = [];
  let adminKey: string;
  let verifyKey: string;
  let writeKey: string;

  const base = (): Record<string, string> => ({
    VERIFY_DNS_SERVERS: dns.endpoint,
    VERIFY_HELO_NAME: 'helo.agora.test',
    // Seconds: the working path's lookups and greeting must arrive in time on a loaded machine; the tarpit's
    // timeout is still a timeout, only later.
    VERIFY_SMTP_TIMEOUT_MS: '2000',
    VERIFY_DNS_TIMEOUT_MS: '2000',
  });

  /** Another verify app on the same database and Redis (so the keys work), with other settings. */
  async function start(env: Record<string, string>): Promise<App> {
    const runtime = runtimes[0]!;
    const app = await buildVerifyApp({
      ...runtime,
      config: loadConfig({ ...runtime.env, ...base(), ...env }),
    });
    apps.push(app);
    return app;
  }

  let open: App;
  beforeAll(async () => {
    world = await startMailWorld({
      '127.0.0.1': { kind: 'smtp' },
      '127.0.0.3': { kind: 'raw', greeting: null },
      '127.0.0.4': { kind: 'raw', greeting: '554-5.7.1 Your IP is listed\n554 5.7.1 Go away' },
    });
    dns = await startDnsServer({
      'mx.agora.test': { A: ['127.0.0.1'] },
      'tarpit.agora.test': { A: ['127.0.0.3'] },
      'helo.agora.test': { A: ['192.0.2.10'] },
    });
    runtimes.push(
      await createTestRuntime({
        ...base(),
        VERIFY_SMTP_PORT: String(world.port),
        VERIFY_ALLOW_PRIVATE_MX: 'true',
      }),
    );
    open = await start({ VERIFY_SMTP_PORT: String(world.port), VERIFY_ALLOW_PRIVATE_MX: 'true' });
    const { database } = runtimes[0]!;
    await usersRepository(database.db).create({ username: 'operator' });
    adminKey = (
      await createApiKey(database.db, { username: 'operator', plan: 'authenticated', scopes: ['admin'] })
    ).key;
    verifyKey = (
      await createApiKey(database.db, { username: 'operator', plan: 'authenticated', scopes: ['verify'] })
    ).key;
    writeKey = (
      await createApiKey(database.db, { username: 'operator', plan: 'authenticated', scopes: ['qa:write'] })
    ).key;
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const runtime of runtimes) await runtime.close();
    await world?.close();
    await dns?.close();
  });

  const check = (app: App, host: string, key = adminKey) =>
    app.inject({
      method: 'GET',
      url: `/verify/self-check?host=${encodeURIComponent(host)}`,
      headers: { 'x-api-key': key },
    });

  it('is an operator tool: needs a key with the admin scope (a plain verify key is refused)', async () => {
    const none = await open.inject({ method: 'GET', url: '/verify/self-check?host=mx.agora.test' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: true, code: 401 });
    for (const key of [writeKey, verifyKey]) {
      const wrongScope = await check(open, 'mx.agora.test', key);
      expect(wrongScope.statusCode).toBe(403);
      expect(wrongScope.json()).toMatchObject({ error: true, code: 403 });
    }
  });

  it('reports a working path: connected, 220 greeting, HELO name resolving', async () => {
    const response = await check(open, 'mx.agora.test');
    expect(response.statusCode).toBe(200);
    const { data } = response.json();
    expect(data).toMatchObject({
      host: 'mx.agora.test',
      port: world.port,
      outbound_smtp: 'ok',
      addresses: ['127.0.0.1'],
      address_used: '127.0.0.1',
      connected: true,
      helo: { name: 'helo.agora.test', resolves: true, addresses: ['192.0.2.10'] },
    });
    expect(data.greeting).toMatch(/^220 /);
  });

  it('tells a silent server (no greeting) and a refusing greeting apart', async () => {
    const tarpit = (await check(open, 'tarpit.agora.test')).json().data;
    expect(tarpit).toMatchObject({
      outbound_smtp: 'no_greeting',
      connected: true,
      greeting: null,
      error: 'timeout',
    });
    const rejected = (await check(open, '127.0.0.4')).json().data;
    expect(rejected).toMatchObject({ outbound_smtp: 'rejected', connected: true });
    expect(rejected.greeting).toBe('554-5.7.1 Your IP is listed\n554 5.7.1 Go away');
  });

  it('reports a refused connection, a failed lookup and an unresolvable HELO name', async () => {
    const closed = await start({
      VERIFY_SMTP_PORT: String(await freePort()),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'nowhere.agora.test',
    });
    const refused = (await check(closed, 'mx.agora.test')).json().data;
    expect(refused).toMatchObject({ outbound_smtp: 'refused', connected: false, error: 'ECONNREFUSED' });
    expect(refused.helo).toMatchObject({ name: 'nowhere.agora.test', resolves: false, addresses: [] });
    const unknown = (await check(open, 'missing.agora.test')).json().data;
    expect(unknown).toMatchObject({ outbound_smtp: 'dns_failed', connected: false, addresses: [] });
  });

  it('keeps the private-address guard unless VERIFY_ALLOW_PRIVATE_MX is set', async () => {
    const guarded = await start({ VERIFY_SMTP_PORT: String(world.port), VERIFY_ALLOW_PRIVATE_MX: 'false' });
    const data = (await check(guarded, 'mx.agora.test')).json().data;
    expect(data).toMatchObject({
      outbound_smtp: 'private_address',
      connected: false,
      addresses: ['127.0.0.1'],
    });
    expect(world.logs['127.0.0.1']!.connections).toBe(1); // only the allowed check above reached the server
  });

  it('answers 400 for a host that is not a host name', async () => {
    for (const host of ['bad host', 'a..b', `${'a'.repeat(300)}.test`, 'mx.agora.test:25']) {
      const response = await check(open, host);
      expect(response.statusCode, host).toBe(400);
      expect(response.json()).toMatchObject({ error: true, code: 400 });
    }
  });
});
