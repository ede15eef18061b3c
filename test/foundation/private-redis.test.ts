import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

/**
 * `npm start` with no REDIS_URL when nothing answers on 127.0.0.1:6379. The machine's own Redis is there, so each
 * case runs in a network namespace of its own (`unshare -n`): an empty loopback, as on a fresh machine.
 */
function inEmptyNetwork(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('unshare', ['-n', 'sh', '-c', `ip link set lo up && ${script}`], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: '',
        DEMO_DATA: 'false',
        REDIS_URL: '',
        LOG_LEVEL: 'info',
        WORKER_METRICS_PORT: '0',
        ...env,
      },
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    // Never outlive the test: whatever hangs is killed, and the assertions then say what was printed.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const START = `${JSON.stringify(process.execPath)} --import tsx bin/start.ts --role qa`;

describe('no Redis on the machine (npm start)', { timeout: 180_000 }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-private-redis-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts a private redis-server, serves, and stops it on SIGTERM', async () => {
    // Start, wait until /ready answers (PostgreSQL and Redis both up), stop, then check the private Redis is gone.
    const script = `${START} & app=$!
      for i in $(seq 1 120); do curl -sf http://127.0.0.1:3000/ready >/dev/null && break; sleep 0.5; done
      curl -s http://127.0.0.1:3000/ready; echo
      kill -TERM $app; wait $app; echo "app exited $?"
      sleep 0.5; redis-cli -h 127.0.0.1 -p 6379 ping 2>&1 || true`;
    const { code, output } = await inEmptyNetwork(script, {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      QA_PORT: '3000',
    });
    expect(code, output).toBe(0);
    expect(output).toContain('starting a private redis-server');
    // Embedded PGlite: the GIN path as well.
    expect(output).toContain(
      '{"status":"ready","dependencies":{"postgres":"ok","redis":"ok"},"search_index":"gin"}',
    );
    expect(output).toContain('app exited 0');
    expect(output).toMatch(/Could not connect to Redis at 127\.0\.0\.1:6379: Connection refused/);
  });

  it('exits with a paragraph on how to get Redis when redis-server is not installed', async () => {
    // A PATH holding node alone (its own directory may hold redis-server too): nothing to start.
    const bin = path.join(dataDir, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, path.join(bin, 'node'));
    const { code, output } = await inEmptyNetwork(`PATH=${JSON.stringify(bin)} ${START}`, {
      DATA_DIR: dataDir,
    });
    expect(code, output).toBe(3);
    expect(output).toContain('Agora needs Redis');
    expect(output).toContain('REDIS_URL');
    expect(output).toContain('apt-get install redis-server');
  });
});
