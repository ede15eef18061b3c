import { sql } from 'drizzle-orm';
import net from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { freePort } from '../support/ports.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { startListWorld, type VerifyApp } from './helpers.js';

// `npm run verify:list` as a user runs it: a real process uploading to the listening service, following the list
// while a worker verifies it, and writing the CSV results.

let world: Awaited<ReturnType<typeof startListWorld>>;
let runtime: TestRuntime;
let pool: WorkerPool;
let app: VerifyApp;
let key: string;
let url: string;
const dir = mkdtempSync(path.join(tmpdir(), 'verify-list-'));

beforeAll(async () => {
  world = await startListWorld();
  runtime = await createTestRuntime(worldEnv(world.dns.endpoint, world.world.port));
  pool = await startWorkerPool(runtime, ['verify-lists']);
  app = await buildVerifyApp(runtime);
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await pool?.close(5000);
  await runtime?.close();
  await world?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run verify:list', () => {
  it('uploads a CSV, follows the list and downloads its results', async () => {
    const input = path.join(dir, 'contacts.csv');
    const output = path.join(dir, 'out.csv');
    writeFileSync(input, 'name,email\nAnn,alice@example.test\nBob,bob@example.test\n');
    const run = await runProcess('bin/verify-list.ts', [input, '--out', output], {
      VERIFY_URL: url,
      VERIFY_API_KEY: key,
    });
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(/list [a-z2-7]{24}: 2 rows/);
    expect(run.stdout).toMatch(/completed 2\/2 \(100%\) valid 1 invalid 1/);
    const lines = readFileSync(output, 'utf8').trim().split('\r\n');
    expect(lines[0]).toMatch(/^name,email,status,/);
    expect(lines[1]).toMatch(/^Ann,alice@example\.test,valid,/);
    expect(lines[2]).toMatch(/^Bob,bob@example\.test,invalid,/);
    // Named after its file (it was unnamed, "", in GET /lists).
    const id = /list ([a-z2-7]{24}):/.exec(run.stdout)![1]!;
    const [list] = await runtime.database.query<{ name: string }>(
      sql`SELECT name FROM verification_lists WHERE id = ${id}`,
    );
    expect(list!.name).toBe('contacts.csv');
  }, 120_000);

  // The README changes the service's port with VERIFY_PORT; the CLI, which used to try 3001 whatever that said,
  // follows it when VERIFY_URL is not set.
  it('finds the service at VERIFY_PORT without VERIFY_URL', async () => {
    const input = path.join(dir, 'port.txt');
    const output = path.join(dir, 'port.csv');
    writeFileSync(input, 'alice@example.test\n');
    const run = await runProcess('bin/verify-list.ts', [input, '--out', output], {
      VERIFY_URL: '',
      VERIFY_PORT: new URL(url).port,
      VERIFY_API_KEY: key,
    });
    expect(run.code, run.output).toBe(0);
    expect(readFileSync(output, 'utf8')).toMatch(/\r\nalice@example\.test,valid,/);
  }, 120_000);

  // The service's connection is cut in the middle of the CSV download: the CLI asks for the rest after the last
  // whole row it wrote, and the file is the one an uncut download gives.
  it('resumes a results download that was cut', async () => {
    const input = path.join(dir, 'many.csv');
    const output = path.join(dir, 'many.results.csv');
    const rows = Array.from({ length: 3000 }, (_, i) => `"Name ${i}, with a comma",alice@example.test`);
    writeFileSync(input, `name,email\n${rows.join('\n')}\n`);
    let cuts = 0;
    const requests: string[] = [];
    const proxy = await startTcpProxy(new URL(url), (cut) => {
      let csvBytes = -1;
      return {
        fromClient(chunk, toUpstream) {
          requests.push(...(String(chunk).match(/^GET \S+/gm) ?? []));
          // Uncompressed, so that the cut falls after whole rows (a gzip body may decode nothing before it).
          toUpstream(Buffer.from(String(chunk).replace(/^accept-encoding:/gim, 'x-no-encoding:'), 'latin1'));
        },
        fromUpstream(chunk, toClient) {
          if (csvBytes < 0 && /content-type: text\/csv/i.test(String(chunk))) csvBytes = 0;
          if (csvBytes >= 0) csvBytes += chunk.length;
          if (cuts === 0 && csvBytes > 40_000) {
            cuts++;
            toClient(chunk.subarray(0, chunk.length >> 1));
            return cut();
          }
          toClient(chunk);
        },
      };
    });
    try {
      const run = await runProcess('bin/verify-list.ts', [input, '--out', output], {
        VERIFY_URL: `http://127.0.0.1:${proxy.port}`,
        VERIFY_API_KEY: key,
      });
      expect(run.code, run.output).toBe(0);
      expect(cuts).toBe(1);
      expect(run.output).toMatch(/results download cut after row \d+/);
      const resumed = requests.filter((r) => r.includes('/results?format=csv&after_row='));
      expect(resumed, JSON.stringify(requests) + run.output).toHaveLength(1);

      const id = /list ([a-z2-7]{24}):/.exec(run.stdout)![1]!;
      const whole = await fetch(`${url}/lists/${id}/results?format=csv`, { headers: { 'x-api-key': key } });
      const written = readFileSync(output, 'utf8');
      expect(written).toBe(await whole.text());
      expect(written.split('\r\n')).toHaveLength(3002);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('says so when nothing answers at the address', async () => {
    const input = path.join(dir, 'nobody.txt');
    writeFileSync(input, 'alice@example.test\n');
    const run = await runProcess('bin/verify-list.ts', [input], {
      VERIFY_URL: `http://127.0.0.1:${await freePort()}`,
      VERIFY_API_KEY: key,
    });
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/nothing answers there \(is the verification service running\?/);
  }, 120_000);

  it('fails with the service message for a bad key', async () => {
    const input = path.join(dir, 'one.txt');
    writeFileSync(input, 'alice@example.test\n');
    const run = await runProcess('bin/verify-list.ts', [input], { VERIFY_URL: url, VERIFY_API_KEY: 'nope' });
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/401/);
  }, 120_000);
});

describe('an interrupted upload', () => {
  it('leaves nothing behind and does not hold its transaction open', async () => {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /lists?name=cut HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: text/csv\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n',
    );
    const rows = `email\n${Array.from({ length: 2000 }, (_, i) => `u${i}@example.test`).join('\n')}\n`;
    socket.write(`${Buffer.byteLength(rows).toString(16)}\r\n${rows}\r\n`);
    // The rows are being written inside the upload's transaction: wait until it is open, then cut the connection.
    const inTransaction = () =>
      runtime.database.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
      );
    while ((await inTransaction())[0]!.n === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    socket.destroy();
    while ((await inTransaction())[0]!.n > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const [lists] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM verification_lists WHERE name = 'cut'`,
    );
    expect(lists!.n).toBe(0);
  });
});
