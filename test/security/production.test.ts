import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { adminSessionsRepository } from '../../shared/db/repositories/admin-sessions.js';
import { developmentSecretWarnings } from '../../shared/production-guards.js';
import { loadAppSecret } from '../../shared/secrets.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { ADMIN_TOKEN, APP_SECRET } from './helpers.js';

/**
 * Issue 23, findings 3 and 4, and issue 18 item 2: NODE_ENV=production refuses to start on development defaults
 * (no DATABASE_URL, no REDIS_URL, no APP_SECRET, a short credential), naming every problem at once; secrets are
 * never printed by the admin CLI; admin cookies are Secure in production unless COOKIE_SECURE=false.
 */

const complete = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://agora@db.internal:5432/agora',
  REDIS_URL: 'redis://redis.internal:6379',
  APP_SECRET,
  ADMIN_TOKEN,
};

describe('production configuration', () => {
  it('accepts a complete production environment', () => {
    const config = loadConfig(complete);
    expect(config.env).toBe('production');
    expect(config.cookieSecure).toBe(true);
  });

  it('lists every missing or weak production variable in one error', () => {
    let error: unknown;
    try {
      loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'a', METRICS_TOKEN: 'short' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'APP_SECRET', 'ADMIN_TOKEN', 'METRICS_TOKEN'])
      expect(
        problems.some((p) => p.startsWith(`${name}:`)),
        name,
      ).toBe(true);
    // The message never repeats the weak value itself.
    expect((error as ConfigError).message).not.toMatch(/short/);
  });

  it('refuses a short APP_SECRET or ADMIN_TOKEN in production only', () => {
    expect(() => loadConfig({ ...complete, APP_SECRET: 'x'.repeat(31) })).toThrow(
      /APP_SECRET: 31 characters/,
    );
    expect(() => loadConfig({ ...complete, ADMIN_TOKEN: 'a' })).toThrow(/ADMIN_TOKEN: 1 characters/);
    expect(loadConfig({ ADMIN_TOKEN: 'a' }).adminToken).toBe('a');
  });

  it('only warns about the same weaknesses outside production', () => {
    const warnings = developmentSecretWarnings(loadConfig({ ADMIN_TOKEN: 'a' }));
    expect(warnings.join('\n')).toMatch(/APP_SECRET unset/);
    expect(warnings.join('\n')).toMatch(/ADMIN_TOKEN has 1 characters/);
    expect(developmentSecretWarnings(loadConfig({ APP_SECRET, ADMIN_TOKEN }))).toEqual([]);
  });

  it('sets Secure on cookies in production unless COOKIE_SECURE=false; elsewhere follows the request', () => {
    expect(loadConfig({ ...complete, COOKIE_SECURE: 'false' }).cookieSecure).toBe(false);
    expect(loadConfig({}).cookieSecure).toBe('auto');
    expect(loadConfig({ COOKIE_SECURE: 'true' }).cookieSecure).toBe(true);
    expect(() => loadConfig({ COOKIE_SECURE: 'sometimes' })).toThrow(/COOKIE_SECURE/);
  });
});

describe('production start-up and the admin CLI, as processes', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => runtime?.close());

  it('npm start with NODE_ENV=production and nothing else stops with one clear message', async () => {
    const { code, output } = await runProcess('bin/start.ts', ['--role', 'qa'], {
      NODE_ENV: 'production',
      DATABASE_URL: '',
      REDIS_URL: '',
      APP_SECRET: '',
      ADMIN_TOKEN: 'a',
    });
    expect(code).toBe(2);
    expect(output).toContain('Invalid configuration');
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'APP_SECRET', 'ADMIN_TOKEN'])
      expect(output).toContain(`${name}:`);
    expect(output).not.toContain('Server listening');
  });

  it('settings list masks the generated app secret', async () => {
    // Development without APP_SECRET: a secret is generated into the settings table on first use.
    const env = { ...runtime.env, APP_SECRET: '' };
    await settingsRepository(runtime.database.db).set('ai_enabled', true);
    await loadAppSecret({ appSecret: undefined }, runtime.database);
    const [row] = await runtime.database.query<{ value: string }>(
      sql`SELECT value FROM settings WHERE key = 'app_secret'`,
    );
    const secret = row!.value;
    expect(secret.length).toBeGreaterThanOrEqual(32);

    const { code, stdout } = await runProcess('bin/admin.ts', ['settings', 'list'], env);
    expect(code).toBe(0);
    expect(stdout).toContain('ai_enabled = true');
    expect(stdout).toMatch(/app_secret = \(hidden, \d+ characters\)/);
    expect(stdout).not.toContain(secret);
    expect(stdout).not.toContain(secret.slice(0, 8));
  });

  it('admin -- sessions revoke-all ends every admin session', async () => {
    const sessions = adminSessionsRepository(runtime.database.db);
    const expiresAt = new Date(Date.now() + 3_600_000);
    await sessions.create({ id: 'a'.repeat(64), tokenFingerprint: 'fp', expiresAt });
    await sessions.create({ id: 'b'.repeat(64), tokenFingerprint: 'fp', expiresAt });
    const { code, stdout } = await runProcess('bin/admin.ts', ['sessions', 'revoke-all'], runtime.env);
    expect(code).toBe(0);
    expect(stdout).toBe('ended 2 admin sessions\n');
    expect(await sessions.isLive('a'.repeat(64), 'fp')).toBe(false);
  });
});
