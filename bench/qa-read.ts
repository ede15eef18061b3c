/**
 * Q&A read throughput: the service (`tsx bin/start.ts --role qa`, rate limits off) against a baseline of a bare
 * Fastify calling the same repositories (bench/lib/qa-read-baseline.ts), endpoint by endpoint, at 64
 * connections for a bounded duration each, on a dedicated database seeded with 100k questions.
 *
 *   npx tsx bench/qa-read.ts [--questions 100000] [--duration 10] [--connections 64] [--reuse]
 *
 * `--reuse` keeps an already seeded agora_bench database. Needs PostgreSQL (BENCH_POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres) and Redis (BENCH_REDIS_URL); loopback only. Prints a markdown
 * section for docs/benchmarks.md.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../shared/db/client.js';
import { migrateDatabase } from '../shared/db/migrate.js';
import { seedDatabase } from '../shared/demo/seed.js';
import { COMMON_WORD, RARE_WORD } from '../shared/demo/topics.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { benchDatabaseUrl, recreateDatabase } from './lib/postgres.js';
import { freePort, startServer, type BenchServer } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    reuse: { type: 'boolean', default: false },
  },
});
const QUESTIONS = Math.min(Math.max(Number(values.questions), 100), 1_000_000);
const DURATION_S = Math.min(Math.max(Number(values.duration), 1), 60);
const CONNECTIONS = Math.min(Math.max(Number(values.connections), 1), 1024);
const DATABASE = 'agora_bench';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = (line: string) => process.stderr.write(`${line}\n`);

async function prepareDatabase(): Promise<{ url: string; seedSeconds: number | null }> {
  if (values.reuse) return { url: benchDatabaseUrl(DATABASE), seedSeconds: null };
  const url = await recreateDatabase(DATABASE);
  const database = await openDatabase({ databaseUrl: url, dataDir: '' });
  try {
    await migrateDatabase(database);
    log(`seeding ${QUESTIONS} questions…`);
    const summary = await seedDatabase(database, { questions: QUESTIONS });
    log(`seeded in ${summary.seconds} s: ${JSON.stringify(summary)}`);
    await database.query(sql`ANALYZE`);
    return { url, seedSeconds: summary.seconds };
  } finally {
    await database.close();
  }
}

async function pickTargets(url: string) {
  const database = await openDatabase({ databaseUrl: url, dataDir: '' });
  try {
    const [tag] = await database.query<{ slug: string }>(
      sql`SELECT slug FROM tags ORDER BY questions_count DESC, id LIMIT 1`,
    );
    const [question] = await database.query<{ id: number }>(
      sql`SELECT id FROM questions WHERE answers_count >= 3 ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM questions WHERE answers_count >= 3)`,
    );
    return { tag: tag!.slug, question: question!.id };
  } finally {
    await database.close();
  }
}

async function main() {
  const { url, seedSeconds } = await prepareDatabase();
  const { tag, question } = await pickTargets(url);
  const cases: Array<[label: string, path: string, kind: 'list' | 'search' | 'detail']> = [
    ['questions, page 1 (newest)', '/api/questions', 'list'],
    ['questions, page 500', '/api/questions?page=500', 'list'],
    ['questions, sort=votes', '/api/questions?sort=votes', 'list'],
    ['questions, sort=views', '/api/questions?sort=views', 'list'],
    ['questions, sort=unanswered', '/api/questions?sort=unanswered', 'list'],
    [`questions, tag=${tag}`, `/api/questions?tag=${encodeURIComponent(tag)}`, 'list'],
    ['question + answers + comments', `/api/questions/${question}?include=answers,comments`, 'detail'],
    [`search "${COMMON_WORD}" (common)`, `/api/search?q=${COMMON_WORD}`, 'search'],
    [`search "${RARE_WORD}" (rare)`, `/api/search?q=${RARE_WORD}`, 'search'],
  ];

  const [servicePort, baselinePort] = [await freePort(), await freePort()];
  const servers: BenchServer[] = [];
  try {
    const service = await startServer(
      'bin/start.ts',
      ['--role', 'qa'],
      {
        DATABASE_URL: url,
        REDIS_URL,
        QUEUE_PREFIX: '{agora-bench-qa}',
        HOST: '127.0.0.1',
        QA_PORT: String(servicePort),
        RATE_LIMIT_ENABLED: 'false',
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
      },
      { port: servicePort, readyPath: '/api/categories' },
    );
    servers.push(service);
    const baseline = await startServer(
      'bench/lib/qa-read-baseline.ts',
      [],
      { DATABASE_URL: url, PORT: String(baselinePort) },
      { port: baselinePort, readyPath: '/health' },
    );
    servers.push(baseline);

    const rows: Array<Array<string | number>> = [];
    const misses: string[] = [];
    for (const [label, path, kind] of cases) {
      for (const server of [service, baseline]) {
        const res = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(10_000) });
        if (res.status !== 200)
          throw new Error(`${server.url}${path} answered ${res.status}: ${await res.text()}`);
      }
      log(`${label}: service…`);
      const s: LoadResult = await runLoad(`${service.url}${path}`, {
        connections: CONNECTIONS,
        durationSeconds: DURATION_S,
      });
      log(`${label}: baseline…`);
      const b: LoadResult = await runLoad(`${baseline.url}${path}`, {
        connections: CONNECTIONS,
        durationSeconds: DURATION_S,
      });
      const ratio = Math.round((s.requestsPerSecond / b.requestsPerSecond) * 100) / 100;
      const p99Target = kind === 'search' ? 100 : 50;
      rows.push([label, s.requestsPerSecond, s.p50, s.p99, b.requestsPerSecond, b.p50, b.p99, ratio]);
      if (ratio < 0.7) misses.push(`${label}: ${ratio}× baseline (target ≥ 0.7×)`);
      if (kind !== 'detail' && s.p99 >= p99Target)
        misses.push(`${label}: p99 ${s.p99} ms (target < ${p99Target} ms)`);
      if (s.non2xx + s.errors + b.non2xx + b.errors > 0)
        misses.push(
          `${label}: ${s.non2xx + s.errors} failed service requests, ${b.non2xx + b.errors} baseline`,
        );
    }

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    process.stdout.write(
      [
        `Machine: ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
          `PostgreSQL and Redis on the same machine. ${QUESTIONS} questions` +
          (seedSeconds === null ? ' (reused database).' : `, seeded in ${seedSeconds} s.`),
        `${CONNECTIONS} connections, ${DURATION_S} s per run; service and baseline run one after the other.`,
        '',
        markdownTable(
          ['endpoint', 'service req/s', 'p50 ms', 'p99 ms', 'baseline req/s', 'p50 ms', 'p99 ms', 'ratio'],
          rows,
        ),
        '',
        misses.length === 0
          ? 'All targets met.'
          : `Targets missed:\n${misses.map((m) => `- ${m}`).join('\n')}`,
        '',
      ].join('\n'),
    );
  } finally {
    for (const s of servers) await s.stop();
  }
}

main().catch((err) => {
  log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
