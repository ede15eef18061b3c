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
import { parseBenchArgs } from './lib/args.js';
import { runLoad, runRequests } from './lib/load.js';
import { resetBenchState, withSql } from './lib/postgres.js';
import { BenchChildren, benchEnv, freePort, runScript } from './lib/processes.js';
import { deleteKeys } from './lib/redis.js';

const {
  duration: DURATION_S,
  connections: CONNECTIONS,
  options: OPTIONS,
} = parseBenchArgs({ duration: [10, 1, 120], connections: [64, 1, 1024], options: [4, 2, 20] });
const SETTLE_TIMEOUT_MS = 60_000;

const DATABASE = 'agora_bench_polls';
const PREFIX = '{agora-bench-polls}';

const log = (line: string) => process.stderr.write(`${line}\n`);
const children = new BenchChildren();

async function main(): Promise<void> {
  const databaseUrl = await resetBenchState(DATABASE, PREFIX);
  const port = await freePort();
  const env = {
    ...benchEnv(databaseUrl, PREFIX),
    QA_PORT: String(port),
    TRUST_PROXY: 'true',
    RATE_LIMIT_ENABLED: 'false',
  };
  // The server migrates the fresh database; the worker and the CLI start once it is up.
  const base = `http://127.0.0.1:${port}`;
  await children.startHealthy('bin/start.ts', ['--role', 'qa'], env, base);
  // No metrics listener: its fixed default port may be taken by another worker on this machine.
  children.start('workers/main.ts', ['--queues', 'polls'], { ...env, WORKER_METRICS_PORT: '0' });
  const optionTexts = Array.from({ length: OPTIONS }, (_, i) => `Option ${i + 1}`).join(',');
  const created = JSON.parse(
    await runScript(
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
  const baseline = await runLoad(`${base}/health`, {
    connections: CONNECTIONS,
    durationSeconds: Math.min(DURATION_S, 5),
  });

  let sent = 0;
  const result = await runRequests(`${base}/api/poll-vote.php`, {
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
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

  let settledMs: number | null = null;
  let votes = 0;
  await withSql(databaseUrl, async (sql) => {
    while (Date.now() - lastVoteAt < SETTLE_TIMEOUT_MS) {
      const rows = await sql<{ stored: number; counted: number }[]>`
        SELECT o.votes AS stored, (SELECT count(*)::int FROM poll_votes v WHERE v.option_id = o.id) AS counted
        FROM poll_options o WHERE o.poll_id = ${created.id}`;
      votes = rows.reduce((s, r) => s + r.counted, 0);
      if (rows.every((r) => r.stored === r.counted)) {
        settledMs = Date.now() - lastVoteAt;
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  const summary = {
    connections: CONNECTIONS,
    durationS: DURATION_S,
    votesPerSecond: result.requestsPerSecond,
    totalRequests: result.requests,
    ok2xx: result.ok2xx,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: { p50: result.p50, p99: result.p99, max: result.maxLatency },
    votesInTable: votes,
    healthBaselinePerSecond: baseline.requestsPerSecond,
    settledAfterLastVoteMs: settledMs,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
}

try {
  await main();
} finally {
  await children.stopAll();
  await deleteKeys(PREFIX).catch(() => {});
}
