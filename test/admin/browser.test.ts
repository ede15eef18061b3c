import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { subscribers } from '../../shared/db/schema/index.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { ROOT } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { ADMIN_TOKEN } from './helpers.js';

/**
 * The panel in a real browser: Debian's chromium driven by playwright-core (installed by .ci/install-chromium.sh),
 * against the Q&A app listening on loopback. Each page is saved under docs/screenshots/ for the README.
 */

const CHROMIUM = '/usr/bin/chromium';
// The README's screenshots are refreshed on request (UPDATE_SCREENSHOTS=1 npm test -- test/admin); an ordinary
// run still takes every screenshot (a page that fails to render fails the test) but keeps the tree clean.
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(ROOT, 'docs/screenshots')
  : mkdtempSync(path.join(os.tmpdir(), 'agora-screenshots-'));

describe('admin panel in chromium', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let pool: WorkerPool;
  let browser: BrowserContext;
  let page: Page;
  let base: string;
  let profile: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({
      ADMIN_TOKEN,
      RATE_LIMIT_ANONYMOUS_HOURLY: '100000',
      RATE_LIMIT_ANONYMOUS_DAILY: '100000',
    });
    await runtime.database.db.insert(subscribers).values([
      { email: 'ada@example.com', frequency: 'daily', status: 'confirmed' },
      { email: 'grace@example.com', frequency: 'weekly', status: 'confirmed' },
      { email: 'linus@example.com', frequency: 'weekly', status: 'pending' },
      { email: 'ken@example.com', frequency: 'monthly', status: 'unsubscribed' },
    ]);
    // ai.php enqueues to the ai workers and waits for the answer: serve that queue in this process.
    pool = await startWorkerPool(runtime, ['ai']);
    app = await buildQaApp(runtime);
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await mkdir(SHOTS, { recursive: true });
    profile = mkdtempSync(path.join(os.tmpdir(), 'agora-chromium-'));
    // A fresh profile directory per run (playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
      timeout: 30_000,
      viewport: { width: 1280, height: 860 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await app?.close();
    await pool?.close(5000);
    await runtime?.close();
  });

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const api = (url: string, init: RequestInit = {}) =>
    fetch(`${base}${url}`, { ...init, signal: AbortSignal.timeout(30_000) });
  const aiSpamCheck = () =>
    api('/api/ai.php', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'spam_check', content: 'How do I join two tables in PostgreSQL?' }),
    });

  it('logs in, manages a key, toggles AI and opens the queues', async () => {
    // Sign in.
    await page.goto(`${base}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await shot('admin-login');
    await page.fill('#token', 'wrong-token');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('.flash')).toContain('Wrong admin token');
    await page.fill('#token', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${base}/admin`), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('Overview');
    const cookie = (await browser.cookies()).find((c) => c.name === 'agora_admin');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    await shot('admin-overview');

    // Create a key (shown once) and use it against the API.
    await page.click('nav >> text=API keys');
    await page.fill('#username', 'browser-user');
    await page.fill('#name', 'screenshot key');
    await page.selectOption('#plan', 'premium');
    await page.check('input[name=scopes][value=verify]');
    await page.check('input[name=create_user]');
    await page.click('form[action="/admin/keys"] button[type=submit]');
    const key = (await page.textContent('#new-key'))!.trim();
    expect(key).toMatch(/^agora_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    await shot('admin-keys');
    expect((await api('/api/categories', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    // Revoke it: the same request is now a 401.
    // Reloading the result page posts the form again: no second key is made, and the key is not shown again.
    await page.reload();
    await expect.poll(() => page.textContent('.flash')).toContain('already submitted');
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.locator('button:has-text("Revoke")').count()).toBe(1);
    await page.click('button:has-text("Revoke")');
    await expect.poll(() => page.textContent('.flash')).toContain('revoked');
    const refused = await api('/api/categories', { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: true, code: 401 });

    // AI is off: ai.php answers 403. Turn it on in the settings and the same request is answered.
    expect((await aiSpamCheck()).status).toBe(403);
    await page.click('nav >> text=Settings');
    await page.check('#setting-ai_enabled');
    await page.click('form[action="/admin/settings"] button[type=submit]');
    await expect.poll(() => page.textContent('.flash')).toContain('ai_enabled = true');
    await shot('admin-settings');
    const enabled = await aiSpamCheck();
    expect(enabled.status).toBe(200);
    expect(await enabled.json()).toMatchObject({
      success: true,
      is_spam: expect.any(Boolean),
      confidence: expect.any(Number),
    });
    await page.uncheck('#setting-ai_enabled');
    await page.click('form[action="/admin/settings"] button[type=submit]');
    await expect.poll(() => page.textContent('.flash')).toContain('ai_enabled = false');
    expect((await aiSpamCheck()).status).toBe(403);

    // Newsletter counts.
    await page.click('nav >> text=Newsletter');
    expect(await page.textContent('td[data-frequency=weekly][data-state=confirmed]')).toBe('1');
    expect(await page.textContent('td[data-frequency=weekly][data-state=pending]')).toBe('1');
    await shot('admin-newsletter');

    // The queue board (bull-board, a client-side app) lists the catalog's queues.
    await page.click('nav >> text=Queues');
    await page.waitForURL(/\/admin\/queues/);
    await page.getByText('newsletter', { exact: false }).first().waitFor();
    expect(await page.content()).toContain('ping');
    // A string, evaluated in the page (the test's own TypeScript has no DOM types).
    await page.waitForFunction("!document.body.innerText.includes('Loading')");
    await shot('admin-queues');

    // Log out from the panel: the pages send the browser back to the login form.
    await page.goto(`${base}/admin/settings`);
    await Promise.all([
      page.waitForURL(`${base}/admin/login`),
      page.click('header button:has-text("Log out")'),
    ]);
    await page.goto(`${base}/admin/keys`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
  }, 120_000);
});
