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
import type autocannon from 'autocannon';
import { parseBenchArgs } from './lib/args.js';
import { runLoad, runRequests, type DetailedLoadResult } from './lib/load.js';
import { dropDatabase, resetBenchState, withSql } from './lib/postgres.js';
import { BenchChildren, benchEnv, freePort } from './lib/processes.js';
import { countKeys, deleteKeys } from './lib/redis.js';

const {
  duration: DURATION_S,
  connections: CONNECTIONS,
  rounds: ROUNDS,
  path: PATH,
} = parseBenchArgs(
  { duration: [10, 1, 60], connections: [48, 1, 512], rounds: [2, 1, 5] },
  { path: '/api/questions' },
);
const CLIENTS = 1024;

const DATABASE = 'agora_bench_ratelimit';
const PREFIX = '{agora-bench-ratelimit}';

const log = (line: string) => process.stderr.write(`${line}\n`);
const children = new BenchChildren();

async function seed(databaseUrl: string): Promise<void> {
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

async function measure(base: string): Promise<DetailedLoadResult> {
  let n = 0;
  const requests: autocannon.Request[] = [
    {
      setupRequest: (request) => {
        const client = n++ % CLIENTS;
        return { ...request, headers: { 'x-forwarded-for': `10.9.${client >> 8}.${client & 255}` } };
      },
    },
  ];
  return runRequests(`${base}${PATH}`, { connections: CONNECTIONS, durationSeconds: DURATION_S, requests });
}

async function main(): Promise<void> {
  const databaseUrl = await resetBenchState(DATABASE, PREFIX);
  const common = { ...benchEnv(databaseUrl, PREFIX), TRUST_PROXY: 'true' };
  const high = '1000000000';
  const limits = Object.fromEntries(
    ['ANONYMOUS', 'AUTHENTICATED', 'PREMIUM'].flatMap((plan) => [
      [`RATE_LIMIT_${plan}_HOURLY`, high],
      [`RATE_LIMIT_${plan}_DAILY`, high],
    ]),
  );
  const [offPort, onPort] = [await freePort(), await freePort()];
  // The first server migrates the fresh database; the second starts once it is up.
  const off = `http://127.0.0.1:${offPort}`;
  const offEnv = { ...common, QA_PORT: String(offPort), RATE_LIMIT_ENABLED: 'false' };
  await children.startHealthy('bin/start.ts', ['--role', 'qa'], offEnv, off);
  const on = `http://127.0.0.1:${onPort}`;
  const onEnv = { ...common, ...limits, QA_PORT: String(onPort), RATE_LIMIT_ENABLED: 'true' };
  await children.startHealthy('bin/start.ts', ['--role', 'qa'], onEnv, on);
  await seed(databaseUrl);

  const check = await fetch(`${on}${PATH}`);
  if (!check.ok || !check.headers.get('x-ratelimit-limit'))
    throw new Error(`${PATH} on the limited server: ${check.status}, no X-RateLimit-Limit`);
  log(
    `${PATH}: ${CONNECTIONS} connections, ${DURATION_S} s per turn, ${ROUNDS} round(s), ${CLIENTS} client addresses`,
  );
  // Warm both (JIT, connection pools) before measuring.
  await runLoad(`${off}${PATH}`, { connections: CONNECTIONS, durationSeconds: 2 });
  await runLoad(`${on}${PATH}`, { connections: CONNECTIONS, durationSeconds: 2 });

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
        rps: r.requestsPerSecond,
        p50: r.p50,
        p99: r.p99,
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
      });
      log(
        `  round ${round + 1} limiter ${limiter}: ${r.requestsPerSecond} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`,
      );
    }
  }
  const mean = (limiter: 'off' | 'on') => {
    const xs = turns.filter((t) => t.limiter === limiter).map((t) => t.rps);
    return Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
  };
  const [withoutRps, withRps] = [mean('off'), mean('on')];
  const keys = await countKeys(`${PREFIX}:ratelimit:*`);
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
  await children.stopAll();
  await deleteKeys(PREFIX).catch(() => {});
  await dropDatabase(DATABASE).catch(() => {});
}
