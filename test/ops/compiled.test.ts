import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

const run = promisify(execFile);

/**
 * The production build (tsconfig.build.json + infra/build-assets.sh, as `npm run build` runs them), made into a
 * directory of the test's own, then its roles started with plain `node` (no tsx loader) as the image does:
 * the Q&A service answers from PostgreSQL, and a worker process does a job.
 */

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the compiled build', { timeout: 400_000 }, () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'agora-dist-'));
  let runtime: TestRuntime;
  const processes: RunningProcess[] = [];

  beforeAll(async () => {
    await run(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', out],
      {
        cwd: ROOT,
      },
    );
    await run('bash', ['infra/build-assets.sh', out], { cwd: ROOT });
    // What the image has beside dist/: package.json ("type": "module") and node_modules.
    copyFileSync(path.join(ROOT, 'package.json'), path.join(out, 'package.json'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'));
    runtime = await createTestRuntime();
  }, 400_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGTERM')));
    await runtime?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('holds every entry point, with the migrations, models and data beside the code', () => {
    for (const file of [
      'bin/start.js',
      'bin/workers.js',
      'bin/migrate.js',
      'workers/main.js',
      'shared/db/migrations/meta/_journal.json',
      'shared/ai/models/spam-model.json',
      'data/stackexchange-beer',
    ])
      expect(existsSync(path.join(out, file)), file).toBe(true);
    // Nothing of the tests or benchmarks is compiled into it.
    expect(existsSync(path.join(out, 'test'))).toBe(false);
    expect(existsSync(path.join(out, 'bench'))).toBe(false);
  });

  it('runs the Q&A role and a worker with plain node', async () => {
    const port = await freePort();
    const env = { ...runtime.env, HOST: '127.0.0.1', QA_PORT: String(port) };
    const node = (script: string, args: string[]) =>
      startProcess(path.join(out, script), args, env, { loader: false });
    const qa = node('bin/start.js', ['--role', 'qa']);
    const worker = node('bin/workers.js', ['--queues', 'ping']);
    processes.push(qa, worker);
    await Promise.all([qa.waitFor(/"msg":"ready"/, 120_000), worker.waitFor(/"msg":"ready"/, 120_000)]);

    const res = await fetch(`http://127.0.0.1:${port}/api/categories`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
    const ready = await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(10_000) });
    expect(await ready.json()).toEqual({
      status: 'ready',
      dependencies: { postgres: 'ok', redis: 'ok' },
      search_index: 'gin',
    });

    const result = (await runtime.queues.enqueueAndWait('ping', 'echo', { message: 'compiled' }, 90_000)) as {
      worker: number;
    };
    expect(result.worker).toBe(worker.child.pid);
    // No TypeScript loader in these processes.
    expect(qa.child.spawnargs).not.toContain('tsx');
    expect(await Promise.all(processes.map((p) => p.stop('SIGTERM')))).toEqual([0, 0]);
  });
});
