import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess, startProcess, type RunningProcess } from '../support/processes.js';
import { deleteKeys } from '../support/runtime.js';
import { freePort } from '../support/ports.js';

/**
 * `npm start` with no configuration: every role in one process on an embedded PGlite in DATA_DIR, Redis at
 * 127.0.0.1:6379 (running here). The first start checks what a newcomer sees; the same process then serves
 * the README's first steps, literally, with real processes: `npm start` runs on the embedded database while
 * `npm run seed`, `npm run admin -- users create`, `keys create` and `settings set` run beside it; after a
 * restart the seed, the key and the setting are all there. One PGlite directory is opened by one process only;
 * the others reach it through the owner's socket.
 */
describe('npm start on the embedded database, README commands beside it', { timeout: 240_000 }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-shared-'));
  const prefix = `{agora-shared-${randomBytes(4).toString('hex')}}`;
  let app: RunningProcess | undefined;
  let qaPort = 0;
  let verifyPort = 0;
  const env = (): Record<string, string> => ({
    DATABASE_URL: '',
    REDIS_URL: '',
    DATA_DIR: dataDir,
    QUEUE_PREFIX: prefix,
    HOST: '127.0.0.1',
    QA_PORT: String(qaPort),
    VERIFY_PORT: String(verifyPort),
    WORKER_METRICS_PORT: '0',
    RATE_LIMIT_ENABLED: 'false',
  });
  const start = async () => {
    app = startProcess('bin/start.ts', [], env());
    await app.waitFor(/workers started/, 120_000);
  };
  const cli = async (script: string, args: string[]) => {
    const result = await runProcess(script, args, env());
    expect(result.code, result.output).toBe(0);
    return result.stdout.trim();
  };
  const totalQuestions = async () => {
    const res = await fetch(`http://127.0.0.1:${qaPort}/api/questions?limit=1`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { pagination: { total_items: number } } }).data.pagination
      .total_items;
  };
  const answer = (key: string, body: string) =>
    fetch(`http://127.0.0.1:${qaPort}/api/questions/1/answers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: body }),
    });

  afterAll(async () => {
    await app?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await deleteKeys(`${prefix}*`);
  });

  it('serves both services and all workers on PGlite, with the demo data loaded on the first start', async () => {
    [qaPort, verifyPort] = [await freePort(), await freePort()];
    await start();
    expect(app!.output()).toContain('"database":"pglite"');
    // The first start on an empty embedded database loads the bundled dump: a newcomer sees a site.
    expect(app!.output()).toMatch(/"msg":"demo data loaded"/);
    expect(await totalQuestions()).toBe(244);
    expect(app!.output()).toMatch(/"msg":"ready"/);
    expect(app!.output()).toContain(`"docs":"http://127.0.0.1:${qaPort}/api/docs"`);
    const home = await fetch(`http://127.0.0.1:${qaPort}/`);
    expect(home.status).toBe(200);
    expect(await home.json()).toMatchObject({ service: 'Agora Q&A', links: { docs: '/api/docs' } });
    const verifyHome = await fetch(`http://127.0.0.1:${verifyPort}/`);
    expect(await verifyHome.json()).toMatchObject({ service: 'Agora verification' });
    for (const port of [qaPort, verifyPort]) {
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`http://127.0.0.1:${port}/ready`);
      expect(ready.status).toBe(200);
    }
  });

  it('keeps the seed, the key and the setting made while npm start runs, across a restart', async () => {
    // Reads keep being served while the seed's transaction runs through the owner's socket.
    const seeding = cli('bin/seed.ts', ['--questions', '300', '--reset']);
    const reads: number[] = [];
    let seeded = false;
    void seeding.then(() => (seeded = true));
    while (!seeded) {
      const res = await fetch(`http://127.0.0.1:${qaPort}/api/categories`);
      reads.push(res.status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await seeding;
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((status) => status !== 200)).toEqual([]);
    // The seed loads with triggers off, so no NOTIFY tells the service's read cache: a page it cached before the
    // seed may be served until its TTL (QA_READ_CACHE_TTL_MS, 5 s by default) runs out.
    await expect.poll(totalQuestions, { timeout: 20_000 }).toBe(300);

    await cli('bin/admin.ts', ['users', 'create', 'alice']);
    const key = await cli('bin/admin.ts', [
      'keys',
      'create',
      '--user',
      'alice',
      '--plan',
      'premium',
      '--scopes',
      'qa:write',
    ]);
    expect(key).toMatch(/^agora_/);
    await cli('bin/admin.ts', ['settings', 'set', 'ai_enabled', 'true']);
    const before = await answer(
      key,
      'Bottle-condition it for at least three weeks at room temperature, then chill it.',
    );
    expect(before.status).toBe(201);

    expect(await app!.stop('SIGTERM')).toBe(0);
    expect(app!.output()).toContain('"msg":"stopped"');
    expect(existsSync(path.join(dataDir, 'embedded-owner.json'))).toBe(false);
    await start();

    expect(await totalQuestions()).toBe(300);
    const after = await answer(
      key,
      'An imperial stout improves for months; taste one bottle a month and decide.',
    );
    expect(after.status).toBe(201);
    expect(await cli('bin/admin.ts', ['settings', 'list'])).toMatch(/^ai_enabled = true$/m);
  });

  it('lets a command run alone on the embedded database, and the service start after it', async () => {
    expect(await app!.stop('SIGTERM')).toBe(0);
    app = undefined;
    // No service running: the command owns the directory itself, then gives it up.
    await cli('bin/admin.ts', ['users', 'create', 'bob']);
    expect(existsSync(path.join(dataDir, 'embedded-owner.json'))).toBe(false);
    await start();
    const users = await fetch(`http://127.0.0.1:${qaPort}/api/users?sort=name&limit=100`);
    const names = ((await users.json()) as { data: { users: { username: string }[] } }).data.users.map(
      (u) => u.username,
    );
    expect(names).toContain('bob');
  });
});
