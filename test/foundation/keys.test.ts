import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { requireScope } from '../../services/http/auth.js';
import { buildQaApp } from '../../services/qa/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import { PLANS, SCOPES, type Scope } from '../../shared/access/keys.js';
import { apiKeys } from '../../shared/db/schema/index.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

// The CLI's own behaviour (output, exit codes, messages) is proven with real processes; keys that only serve to
// exercise authentication are made in-process with the function the CLI calls, since every process start costs
// seconds on a loaded machine. A case may still run several CLI processes: more than the default 30 s.
describe('API keys and the admin CLI', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let verifyApp: Awaited<ReturnType<typeof buildVerifyApp>>;
  let qaApp: Awaited<ReturnType<typeof buildQaApp>>;
  const admin = (...args: string[]) => runProcess('bin/admin.ts', args, runtime.env);
  const keyFor = (scopes: Scope[]) =>
    createApiKey(runtime.database.db, { username: 'alice', plan: 'authenticated', scopes });

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    verifyApp = await buildVerifyApp(runtime);
    // A test-only route guarded like the verification endpoints.
    verifyApp.get('/test/guarded', { preHandler: requireScope('verify') }, async (req) => ({
      user: req.principal!.userId,
    }));
    qaApp = await buildQaApp(runtime);
    expect((await admin('users', 'create', 'alice')).code).toBe(0);
  });
  afterAll(async () => {
    await verifyApp.close();
    await qaApp.close();
    await runtime.close();
  });

  it('creates a key that is printed alone on stdout and authenticates', async () => {
    const created = await admin(
      'keys',
      'create',
      '--user',
      'alice',
      '--plan',
      'premium',
      '--scopes',
      'qa:write,verify',
    );
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^agora_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(created.stdout).toBe(`${key}\n`);

    const res = await verifyApp.inject({ url: '/test/guarded', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    const [stored] = await runtime.database.db.select().from(apiKeys);
    expect(stored!.hash).not.toContain(key.split('_')[2]);
    expect(stored!.plan).toBe('premium');
  });

  it('prints {id, key, plan, scopes, webhook_secret} with --json', async () => {
    const created = await admin('keys', 'create', '--user', 'alice', '--scopes', 'verify', '--json');
    const parsed = JSON.parse(created.stdout);
    expect(parsed).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(/^agora_/),
      plan: 'authenticated',
      scopes: ['verify'],
      webhook_secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
    });
  });

  it('refuses a missing, unknown, malformed or revoked key with 401 and a key without the scope with 403', async () => {
    const missing = await verifyApp.inject('/test/guarded');
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ error: true, message: 'Missing API key', code: 401 });

    const unknown = await verifyApp.inject({
      url: '/test/guarded',
      headers: { 'x-api-key': `agora_${'a'.repeat(12)}_${'b'.repeat(43)}` },
    });
    expect(unknown.statusCode).toBe(401);
    const garbage = await verifyApp.inject({ url: '/test/guarded', headers: { 'x-api-key': "' OR 1=1 --" } });
    expect(garbage.statusCode).toBe(401);

    const writer = await keyFor(['qa:write']);
    const forbidden = await verifyApp.inject({ url: '/test/guarded', headers: { 'x-api-key': writer.key } });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ error: true, code: 403 });

    const verifier = await keyFor(['verify']);
    expect(
      (await verifyApp.inject({ url: '/test/guarded', headers: { 'x-api-key': verifier.key } })).statusCode,
    ).toBe(200);
    expect((await admin('keys', 'revoke', String(verifier.id))).code).toBe(0);
    const revoked = await verifyApp.inject({ url: '/test/guarded', headers: { 'x-api-key': verifier.key } });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().message).toMatch(/revoked/);
    expect((await admin('keys', 'revoke', String(verifier.id))).code).toBe(1);
  });

  it('reads Bearer keys on the Q&A service and rejects a bad one even on public reads', async () => {
    const { key } = await keyFor(['qa:write']);
    expect(
      (await qaApp.inject({ url: '/api/categories', headers: { authorization: `Bearer ${key}` } }))
        .statusCode,
    ).toBe(200);
    expect(
      (await qaApp.inject({ url: '/api/categories', headers: { authorization: 'Bearer nope' } })).statusCode,
    ).toBe(401);
    expect(
      (await qaApp.inject({ url: '/api/categories', headers: { authorization: `Basic ${key}` } })).statusCode,
    ).toBe(401);
  });

  it('lists keys without secrets, and manages users and settings', async () => {
    // Independent commands run side by side: each is a process of its own either way.
    const [list, set, badValue, duplicateUser, noUser, badScope] = await Promise.all([
      admin('keys', 'list', '--json'),
      admin('settings', 'set', 'ai_enabled', 'true'),
      admin('settings', 'set', 'ai_enabled', 'sure'),
      admin('users', 'create', 'alice'),
      admin('keys', 'create', '--user', 'nobody'),
      admin('keys', 'create', '--user', 'alice', '--scopes', 'root'),
    ]);
    const keys = JSON.parse(list.stdout);
    expect(keys.length).toBeGreaterThanOrEqual(4);
    expect(list.stdout).not.toMatch(/"hash"|"key"|whsec_/);
    expect(keys[0]).toMatchObject({ username: 'alice', plan: expect.any(String), scopes: expect.any(Array) });

    expect(set.code).toBe(0);
    expect((await admin('settings', 'list')).stdout).toContain('ai_enabled = true');
    expect(badValue.code).toBe(2);
    expect(badValue.output).toContain('ai_enabled takes true or false');
    expect(duplicateUser.code).toBe(2);
    expect(noUser.code).toBe(2);
    expect(noUser.output).toContain('No user named nobody');
    expect(badScope.code).toBe(2);
    expect(badScope.output).toContain('--scopes must be from');
  });

  // The usage offered qa:write,verify,admin: the webhooks scope (docs/webhooks.md), which the panel offers, was missing.
  it('names every scope and plan in its usage', async () => {
    const usage = await admin();
    expect(usage.output).toContain(`--scopes ${SCOPES.join(',')}`);
    expect(usage.output).toContain(`--plan ${PLANS.join('|')}`);
  });
});
