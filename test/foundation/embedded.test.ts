import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { deleteKeys } from '../support/runtime.js';

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/**
 * `npm start` with no DATABASE_URL: every role in one process on an embedded PGlite in DATA_DIR, Redis at
 * 127.0.0.1:6379 (running here), then SIGTERM stops it cleanly.
 */
describe('the embedded default (npm start without configuration)', { timeout: 180_000 }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-embedded-'));
  const prefix = `{agora-embedded-${randomBytes(4).toString('hex')}}`;
  let app: RunningProcess | undefined;

  afterAll(async () => {
    await app?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await deleteKeys(`${prefix}*`);
  });

  it('serves both services and all workers on PGlite, and stops on SIGTERM', async () => {
    const [qaPort, verifyPort] = [await freePort(), await freePort()];
    app = startProcess('bin/start.ts', [], {
      DATABASE_URL: '',
      REDIS_URL: '',
      DATA_DIR: dataDir,
      QUEUE_PREFIX: prefix,
      HOST: '127.0.0.1',
      QA_PORT: String(qaPort),
      VERIFY_PORT: String(verifyPort),
    });
    await app.waitFor(/workers started/, 120_000);
    expect(app.output()).toContain('"database":"pglite"');

    // The first start on an empty embedded database loads the bundled dump: a newcomer sees a site.
    expect(app.output()).toMatch(/"msg":"demo data loaded"/);
    const questions = await fetch(`http://127.0.0.1:${qaPort}/api/questions?limit=1`);
    expect(questions.status).toBe(200);
    const listed = (await questions.json()) as { data: { pagination: { total_items: number } } };
    expect(listed.data.pagination.total_items).toBe(244);
    expect(app.output()).toMatch(/"msg":"ready"/);
    expect(app.output()).toContain(`"docs":"http://127.0.0.1:${qaPort}/api/docs"`);
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

    expect(await app.stop('SIGTERM')).toBe(0);
    expect(app.output()).toContain('"msg":"stopped"');
  });
});
