/**
 * What the rate limiter costs: req/s of GET /api/questions on two Q&A servers of the same build, one with
 * RATE_LIMIT_ENABLED=false and one with the limiter on (limits raised to 10^9 so nothing is refused), measured
 * in turns (off, on, off, on, …) in one run so that both see the same machine state.
 *
 * Requests come from 1024 distinct client addresses (X-Forwarded-For behind TRUST_PROXY), so the limiter works
 * on many keys as in production rather than one hot key. Servers are child processes (`tsx bin/start.ts --role
 * qa`) on a dedicated database (agora_bench_ratelimit, recreated, 500 questions) and QUEUE_PREFIX.
 *
 *   npx tsx bench/ratelimit.ts [--duration 10] [--connections 48] [--rounds 2] [--path /api/questions]
 *
 * Needs PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres) and Redis
 * (BENCH_REDIS_URL, default redis://127.0.0.1:6379). Loopback only; bounded by duration × rounds.
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
    connections: { type: 'string', default: '48' },
    rounds: { type: 'string', default: '2' },
    path: { type: 'string', default: '/api/questions' },
  },
});
const DURATION_S = Math.min(Math.max(Number(values.duration), 1), 60);
const CONNECTIONS = Math.min(Math.max(Number(values.connections), 1), 512);
const ROUNDS = Math.min(Math.max(Number(values.rounds), 1), 5);
const PATH = values.path!;
const CLIENTS = 1024;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE = 'agora_bench_ratelimit';
const PREFIX = '{agora-bench-ratelimit}';
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

async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const children: ChildProcess[] = [];
function startServer(env: Record<string, string>): void {
  const child = spawn(TSX, ['bin/start.ts', '--role', 'qa'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become healthy within ${timeoutMs} ms`);
}

async function seed(): Promise<void> {
  await withSql(databaseUrl, async (sql) => {
    const [user] = await sql<
      { id: number }[]
    >`INSERT INTO users (username, display_name) VALUES ('bench', 'Bench') RETURNING id`;
    const [category] = await sql<
      { id: number }[]
    >`INSERT INTO categories (name, slug) VALUES ('Brewing', 'brewing') RETURNING id`;
    await sql`INSERT INTO tags (name, slug) VALUES ('brewing', 'brewing'), ('yeast', 'yeast'), ('hops', 'hops')`;
    await sql`
      INSERT INTO questions (title, slug, content, author_id, category_id, votes, views)
      SELECT 'Benchmark question number ' || n, 'benchmark-question-' || n,
             repeat('How long should a lager ferment before it is bottled? ', 8), ${user!.id}, ${category!.id}, n % 17, n * 3
      FROM generate_series(1, 500) AS n`;
    await sql`INSERT INTO question_tags (question_id, tag_id) SELECT q.id, t.id FROM questions q CROSS JOIN tags t WHERE (q.id + t.id) % 2 = 0`;
  });
}

async function measure(base: string): Promise<autocannon.Result> {
  let n = 0;
  return autocannon({
    url: `${base}${PATH}`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => {
          const client = n++ % CLIENTS;
          return { ...request, headers: { 'x-forwarded-for': `10.9.${client >> 8}.${client & 255}` } };
        },
      },
    ],
  });
}

async function main(): Promise<void> {
  await withSql(ADMIN_URL, async (sql) => {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`);
    await sql.unsafe(`CREATE DATABASE "${DATABASE}"`);
  });
  await deleteKeys();
  const common = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    HOST: '127.0.0.1',
    TRUST_PROXY: 'true',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  const high = '1000000000';
  const limits = Object.fromEntries(
    ['ANONYMOUS', 'AUTHENTICATED', 'PREMIUM'].flatMap((plan) => [
      [`RATE_LIMIT_${plan}_HOURLY`, high],
      [`RATE_LIMIT_${plan}_DAILY`, high],
    ]),
  );
  const [offPort, onPort] = [await freePort(), await freePort()];
  // The first server migrates the fresh database; the second starts once it is up.
  startServer({ ...common, QA_PORT: String(offPort), RATE_LIMIT_ENABLED: 'false' });
  const off = `http://127.0.0.1:${offPort}`;
  await waitForHealth(off, 60_000);
  startServer({ ...common, ...limits, QA_PORT: String(onPort), RATE_LIMIT_ENABLED: 'true' });
  const on = `http://127.0.0.1:${onPort}`;
  await waitForHealth(on, 60_000);
  await seed();

  const check = await fetch(`${on}${PATH}`);
  if (!check.ok || !check.headers.get('x-ratelimit-limit'))
    throw new Error(`${PATH} on the limited server: ${check.status}, no X-RateLimit-Limit`);
  log(
    `${PATH}: ${CONNECTIONS} connections, ${DURATION_S} s per turn, ${ROUNDS} round(s), ${CLIENTS} client addresses`,
  );
  // Warm both (JIT, connection pools) before measuring.
  await autocannon({ url: `${off}${PATH}`, connections: CONNECTIONS, duration: 2 });
  await autocannon({ url: `${on}${PATH}`, connections: CONNECTIONS, duration: 2 });

  const turns: Array<{
    limiter: 'off' | 'on';
    rps: number;
    p50: number;
    p99: number;
    non2xx: number;
    errors: number;
  }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [limiter, base] of [
      ['off', off],
      ['on', on],
    ] as const) {
      const r = await measure(base);
      turns.push({
        limiter,
        rps: Math.round(r.requests.average),
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
      });
      log(
        `  round ${round + 1} limiter ${limiter}: ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`,
      );
    }
  }
  const mean = (limiter: 'off' | 'on') => {
    const xs = turns.filter((t) => t.limiter === limiter).map((t) => t.rps);
    return Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
  };
  const [withoutRps, withRps] = [mean('off'), mean('on')];
  const [keys] = await (async () => {
    const redis = new Redis(REDIS_URL, { connectTimeout: 5000 });
    try {
      return [(await redis.keys(`${PREFIX}:ratelimit:*`)).length];
    } finally {
      redis.disconnect();
    }
  })();
  const summary = {
    path: PATH,
    connections: CONNECTIONS,
    durationS: DURATION_S,
    rounds: ROUNDS,
    withoutLimiterRps: withoutRps,
    withLimiterRps: withRps,
    costPercent: Math.round(((withoutRps - withRps) / withoutRps) * 1000) / 10,
    rateLimitKeysInRedis: keys,
    turns,
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
  await withSql(ADMIN_URL, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`)).catch(
    () => {},
  );
}
