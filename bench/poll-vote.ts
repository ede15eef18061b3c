/**
 * Poll voting under load: votes/s at 64 connections on one hot poll, each request from a distinct client address
 * (X-Forwarded-For behind TRUST_PROXY), rate limits off; then the time from the last vote to a settled tally
 * (stored counts equal to the votes table, read from PostgreSQL).
 *
 * The Q&A server (`tsx bin/start.ts --role qa`) and a polls worker (`tsx workers/main.ts --queues polls`) run as
 * child processes against a dedicated database (agora_bench_polls, recreated) and a dedicated QUEUE_PREFIX.
 *
 *   npx tsx bench/poll-vote.ts [--duration 10] [--connections 64] [--options 4]
 *
 * Needs PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres) and Redis
 * (BENCH_REDIS_URL, default redis://127.0.0.1:6379). Loopback only; bounded by --duration.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import postgres from 'postgres';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    options: { type: 'string', default: '4' },
  },
});
const DURATION_S = Math.min(Math.max(Number(values.duration), 1), 120);
const CONNECTIONS = Math.min(Math.max(Number(values.connections), 1), 1024);
const OPTIONS = Math.min(Math.max(Number(values.options), 2), 20);
const SETTLE_TIMEOUT_MS = 60_000;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE = 'agora_bench_polls';
const PREFIX = '{agora-bench-polls}';
const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${DATABASE}` }).toString();

const log = (line: string) => process.stderr.write(`${line}\n`);

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function deleteKeys(): Promise<void> {
  const redis = new Redis(REDIS_URL, { connectTimeout: 5000, maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function recreateDatabase(): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE "${DATABASE}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

const children: ChildProcess[] = [];
function start(script: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(TSX, [script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function run(script: string, args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(TSX, [script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}`);
  return out;
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become healthy within ${timeoutMs} ms`);
}

async function main(): Promise<void> {
  await recreateDatabase();
  await deleteKeys();
  const port = await freePort();
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    HOST: '127.0.0.1',
    QA_PORT: String(port),
    TRUST_PROXY: 'true',
    RATE_LIMIT_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  // The server migrates the fresh database; the worker and the CLI start once it is up.
  start('bin/start.ts', ['--role', 'qa'], env);
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, 60_000);
  // No metrics listener: its fixed default port may be taken by another worker on this machine.
  start('workers/main.ts', ['--queues', 'polls'], { ...env, WORKER_METRICS_PORT: '0' });
  const optionTexts = Array.from({ length: OPTIONS }, (_, i) => `Option ${i + 1}`).join(',');
  const created = JSON.parse(
    await run(
      'bin/admin.ts',
      ['polls', 'create', '--title', 'Hot poll', '--options', optionTexts, '--json'],
      env,
    ),
  ) as {
    id: number;
    options: { id: number }[];
  };
  const optionIds = created.options.map((o) => o.id);
  log(`poll ${created.id}, ${OPTIONS} options; ${CONNECTIONS} connections for ${DURATION_S} s`);

  // The same server's ceiling on this machine, for scale: a route that touches neither PostgreSQL nor Redis.
  const baseline = await autocannon({
    url: `${base}/health`,
    connections: CONNECTIONS,
    duration: Math.min(DURATION_S, 5),
    timeout: 10,
  });

  let sent = 0;
  const result = await autocannon({
    url: `${base}/api/poll-vote.php`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const n = ++sent;
          // A distinct client for every request: 10.x.y.z from the request number.
          const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
          return {
            ...request,
            headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
            body: JSON.stringify({ poll_id: created.id, option_id: optionIds[n % optionIds.length] }),
          };
        },
      },
    ],
  });
  const lastVoteAt = Date.now();

  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  let settledMs: number | null = null;
  let votes = 0;
  try {
    while (Date.now() - lastVoteAt < SETTLE_TIMEOUT_MS) {
      const rows = await sql<{ stored: number; counted: number }[]>`
        SELECT o.votes AS stored, (SELECT count(*)::int FROM poll_votes v WHERE v.option_id = o.id) AS counted
        FROM poll_options o WHERE o.poll_id = ${created.id}`;
      votes = rows.reduce((s, r) => s + r.counted, 0);
      if (rows.every((r) => r.stored === r.counted)) {
        settledMs = Date.now() - lastVoteAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await sql.end({ timeout: 5 });
  }

  const summary = {
    connections: CONNECTIONS,
    durationS: DURATION_S,
    votesPerSecond: Math.round(result.requests.average),
    totalRequests: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    votesInTable: votes,
    healthBaselinePerSecond: Math.round(baseline.requests.average),
    settledAfterLastVoteMs: settledMs,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
}

try {
  await main();
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children.map((c) => (c.exitCode === null && c.signalCode === null ? once(c, 'exit') : undefined)),
  );
  await deleteKeys().catch(() => {});
}
