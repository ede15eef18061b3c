/**
 * AI endpoint latency: p50/p99 and requests/s of POST /api/ai.php per action at 16 connections, through the whole path
 * (HTTP → enqueue → Redis → ai worker → PostgreSQL → back), on a database seeded with `--questions` demo questions.
 * Rate limits are off. Also reports the tag index rebuild (time, size) on that data.
 *
 * The Q&A server (`tsx bin/start.ts --role qa`) and one ai worker (`tsx workers/main.ts --queues ai`) run as child
 * processes against a dedicated database (agora_bench_ai, recreated and dropped) and a dedicated QUEUE_PREFIX.
 *
 *   npx tsx bench/ai.ts [--duration 10] [--connections 16] [--questions 3000]
 *
 * Needs PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres) and Redis
 * (BENCH_REDIS_URL, default redis://127.0.0.1:6379). Loopback only; bounded by --duration per action.
 */
import os from 'node:os';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { parseBenchArgs } from './lib/args.js';
import { runRequests } from './lib/load.js';
import { dropDatabase, resetBenchState } from './lib/postgres.js';
import { BenchChildren, benchEnv, freePort, runScript, waitFor } from './lib/processes.js';
import { deleteKeys, REDIS_URL } from './lib/redis.js';
import { plainMarkdownTable } from './lib/table.js';

const {
  duration: DURATION_S,
  connections: CONNECTIONS,
  questions: QUESTIONS,
} = parseBenchArgs({ duration: [10, 1, 60], connections: [16, 1, 256], questions: [3000, 100, 100_000] });
const INDEX_TIMEOUT_MS = 180_000;

const DATABASE = 'agora_bench_ai';
const PREFIX = '{agora-bench-ai}';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Four realistic inputs per action, cycled by every connection. */
const INPUTS: Record<string, object[]> = {
  spam_check: [
    { content: 'How long can I keep a bottle-conditioned stout in the cellar before the flavour fades?' },
    {
      content:
        'BUY CHEAP WATCHES NOW!!! Visit http://cheap.example.com and http://deals.example.net, WhatsApp +1 555 123 4567',
    },
    {
      content:
        'My sourdough starter smells of acetone after a week in the fridge. Is it still safe to bake with it?',
    },
    { content: 'Which JavaScript test runner works best with ESM modules and TypeScript in a monorepo?' },
  ],
  quality_check: [
    {
      title: 'Sourdough starter smells like acetone',
      content:
        'My starter smells of acetone after a week in the fridge. Should I feed it more often, or is it ruined? I use rye flour and keep it at 4 °C.',
    },
    { content: 'HELP!!! MY CODE DOES NOT WORK' },
    {
      title: 'How do I keep bread crust crisp',
      content:
        'Every loaf I bake has a crisp crust when it leaves the oven but it turns soft within an hour. I bake at 230 °C with steam for the first 15 minutes. What am I doing wrong?',
    },
    {
      content: 'I am planning a trip through the mountains in autumn and want to know what to pack. '.repeat(
        6,
      ),
    },
  ],
  suggest_tags: [
    {
      content:
        'My sourdough starter smells of acetone after a week in the fridge. Should I feed it more often?',
    },
    { content: 'How do I configure a reverse proxy so that my web server sees the real client address?' },
    { content: 'Which houseplants survive in a dark north-facing room with little watering?' },
    { content: 'What is the best way to learn chords on the guitar as a complete beginner?' },
  ],
  chat: [
    { content: 'How do I keep bread crust crisp after baking?' },
    { content: 'What should I pack for a hiking trip in the mountains?' },
    { content: 'How do I water houseplants in winter?' },
    { content: 'How can I speed up a slow database query?' },
  ],
};

const children = new BenchChildren();

interface Row {
  action: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
}

/** `action` 'GET /health' measures the same server on a route that touches neither PostgreSQL, Redis nor a worker. */
async function measure(base: string, action: string): Promise<Row> {
  let n = 0;
  const inputs = INPUTS[action] ?? [];
  const health = action === 'GET /health';
  const result = await runRequests(health ? `${base}/health` : `${base}/api/ai.php`, {
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    timeoutSeconds: 30,
    requests: health
      ? [{ method: 'GET' }]
      : [
          {
            method: 'POST',
            setupRequest: (request) => ({
              ...request,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ action, ...inputs[n++ % inputs.length] }),
            }),
          },
        ],
  });
  return {
    action,
    requestsPerSecond: result.requestsPerSecond,
    p50: result.p50,
    p99: result.p99,
    total: result.requests,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function main(): Promise<void> {
  const databaseUrl = await resetBenchState(DATABASE, PREFIX);
  const port = await freePort();
  const env = {
    ...benchEnv(databaseUrl, PREFIX),
    QA_PORT: String(port),
    RATE_LIMIT_ENABLED: 'false',
    WORKER_METRICS_PORT: '0',
  };
  const base = `http://127.0.0.1:${port}`;
  await children.startHealthy('bin/start.ts', ['--role', 'qa'], env, base); // migrates the fresh database
  log(`seeding ${QUESTIONS} questions…`);
  await runScript('bin/seed.ts', ['--questions', String(QUESTIONS)], env, 'stderr');
  await runScript('bin/admin.ts', ['settings', 'set', 'ai_enabled', 'true'], env, 'stderr');

  // The worker finds no published tag index and rebuilds one at start; the bench waits for it.
  children.start('workers/main.ts', ['--queues', 'ai'], env);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const queue = new Queue('ai', { connection: redis, prefix: PREFIX });
  const rebuild = await waitFor('the tag index', INDEX_TIMEOUT_MS, async () => {
    const jobs = await queue.getJobs(['completed']);
    return jobs.find((j) => j.name === 'rebuild-tag-index')?.returnvalue as
      { questions: number; tags: number; bytes: number; durationMs: number } | undefined;
  });
  log(`tag index: ${JSON.stringify(rebuild)}`);
  await queue.close();
  redis.disconnect();

  // Warm-up: every action once (first wink-nlp calls, connection pools).
  for (const action of Object.keys(INPUTS)) {
    const res = await fetch(`${base}/api/ai.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action, ...INPUTS[action]![0] }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new Error(`warm-up ${action}: ${res.status} ${await res.text()}`);
  }

  const loadBefore = os.loadavg()[0]!.toFixed(1);
  const rows: Row[] = [];
  for (const action of Object.keys(INPUTS)) {
    log(`${action}: ${CONNECTIONS} connections for ${DURATION_S} s`);
    rows.push(await measure(base, action));
  }
  rows.push(await measure(base, 'GET /health'));

  const lines = [
    `${QUESTIONS} seeded questions; ${CONNECTIONS} connections, ${DURATION_S} s per action; one qa process, one ai worker (concurrency 8)`,
    '',
    plainMarkdownTable(
      ['action', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors'],
      rows.map((r) => [r.action, r.requestsPerSecond, r.p50, r.p99, r.total, r.non2xx, r.errors]),
    ),
    '',
    `Machine: ${os.cpus().length} CPUs, 1-minute load average ${loadBefore} before and ${os.loadavg()[0]!.toFixed(1)} after ` +
      '(everything — server, worker, PostgreSQL, Redis, autocannon — shares these CPUs).',
    `Tag index rebuild: ${rebuild.questions} tagged questions, ${rebuild.tags} tags, ${rebuild.durationMs} ms, ` +
      `${Math.round(rebuild.bytes / 1024)} KiB gzipped in Redis.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function cleanup(): Promise<void> {
  await children.stopAll();
  await deleteKeys(PREFIX).catch(() => {});
  await dropDatabase(DATABASE).catch(() => {});
}

// Bounded: whatever hangs, the children are stopped and the database dropped.
const WATCHDOG_MS = 15 * 60_000;
const abort = (why: string) => {
  log(`bench aborted: ${why}`);
  void cleanup().finally(() => process.exit(1));
};
setTimeout(() => abort(`still running after ${WATCHDOG_MS / 60_000} min`), WATCHDOG_MS).unref();
process.once('SIGINT', () => abort('SIGINT'));
process.once('SIGTERM', () => abort('SIGTERM'));

main()
  .then(cleanup)
  .catch(async (err) => {
    log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
    await cleanup();
    process.exitCode = 1;
  });
