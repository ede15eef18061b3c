/**
 * Q&A read throughput: the service (`tsx bin/start.ts --role qa`, rate limits off) twice, with its read cache on
 * (the default) and off (QA_READ_CACHE_TTL_MS=0), against a baseline of a bare Fastify calling the same
 * repositories (bench/lib/qa-read-baseline.ts), endpoint by endpoint, at 64 connections for a bounded duration
 * each, on a dedicated database seeded with 100k questions. Issue 19's reads (several ids, per-user activity, tag
 * details, related/linked/similar, comments, site info) run on the service only: the baseline serves the seed's
 * reads, and their figure to read is the CPU per request. A repeated URL is a cache hit after its first request,
 * so the "cache on" figures of the fixed-URL rows are hit figures; the last row requests distinct pages in turn to
 * measure the miss path.
 *
 *   npx tsx bench/qa-read.ts [--questions 100000] [--duration 10] [--connections 64] [--reuse] [--database agora_bench]
 *
 * `--reuse` keeps an already seeded database (agora_bench unless `--database` names another). Needs PostgreSQL (BENCH_POSTGRES_URL, default
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
import type autocannon from 'autocannon';
import { cpuSecondsByRole, cpuSnapshot, isBackendOf, processTree } from './lib/cpu.js';
import { runLoad, runRequests, type LoadResult } from './lib/load.js';
import { benchDatabaseUrl, recreateDatabase } from './lib/postgres.js';
import { freePort, startServer, type BenchServer } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    reuse: { type: 'boolean', default: false },
    database: { type: 'string', default: 'agora_bench' },
  },
});
const QUESTIONS = Math.min(Math.max(Number(values.questions), 100), 1_000_000);
const DURATION_S = Math.min(Math.max(Number(values.duration), 1), 60);
const CONNECTIONS = Math.min(Math.max(Number(values.connections), 1), 1024);
const DATABASE = /^[a-z0-9_]+$/.test(values.database) ? values.database : 'agora_bench';
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
    // VACUUM as well as ANALYZE: a freshly loaded table has no visibility map (index-only scans read the heap) and
    // its GIN search indexes hold every new row in their pending lists, which made searches ~15x slower than on a
    // database in its steady state.
    await database.query(sql`VACUUM (ANALYZE)`);
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
    const [answer] = await database.query<{ id: number }>(
      sql`SELECT id FROM answers WHERE question_id = ${question!.id} ORDER BY id LIMIT 1`,
    );
    // The most active user: the per-user reads at their largest.
    const [user] = await database.query<{ id: number }>(
      sql`SELECT id FROM users ORDER BY questions_count + answers_count DESC, id LIMIT 1`,
    );
    return { tag: tag!.slug, question: question!.id, answer: answer!.id, user: user!.id };
  } finally {
    await database.close();
  }
}

// The cache-miss heavy row: distinct list pages in rotation, so that (at the rates measured) no URL comes back
// within the cache's 5 s TTL and nearly every request is computed, cache bookkeeping (miss, store, eviction) included.
const MISS_SORTS = ['newest', 'votes', 'views'] as const;
const MISS_PAGES = 2000;

function distinctPages(): { requests: autocannon.Request[]; hits: () => number; responses: () => number } {
  let next = 0;
  let hits = 0;
  let responses = 0;
  return {
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => {
          const n = next++ % (MISS_SORTS.length * MISS_PAGES);
          const sort = MISS_SORTS[n % MISS_SORTS.length]!;
          return {
            ...request,
            path: `/api/questions?sort=${sort}&page=${Math.floor(n / MISS_SORTS.length) + 1}`,
          };
        },
        onResponse: (_status, _body, _context, headers) => {
          responses += 1;
          if ((headers as Record<string, string> | undefined)?.['x-cache'] === 'hit') hits += 1;
        },
      },
    ],
    hits: () => hits,
    responses: () => responses,
  };
}

type Kind = 'list' | 'search' | 'detail';
interface Case {
  label: string;
  kind: Kind;
  /** One URL path, or distinct pages per request. */
  path: string | 'distinct-pages';
  /** Whether the baseline serves it too (the seed's reads); issue 19's reads run on the service only. */
  baseline?: false;
}

type Measured = LoadResult & { hitShare?: number; serviceCpuMs: number; postgresCpuMs: number };

/**
 * One run against one server, with the CPU milliseconds per request of that server's processes and of the
 * PostgreSQL backends of the bench database over the run (issue 19 item 9).
 */
async function measure(server: BenchServer, c: Case): Promise<Measured> {
  const before = cpuSnapshot();
  let result: LoadResult & { hitShare?: number };
  if (c.path !== 'distinct-pages') {
    result = await runLoad(`${server.url}${c.path}`, {
      connections: CONNECTIONS,
      durationSeconds: DURATION_S,
    });
  } else {
    const pages = distinctPages();
    result = {
      ...(await runRequests(server.url, {
        connections: CONNECTIONS,
        durationSeconds: DURATION_S,
        requests: pages.requests,
      })),
      hitShare: pages.responses() > 0 ? pages.hits() / pages.responses() : 0,
    };
  }
  const service = processTree(server.child.pid!);
  const used = cpuSecondsByRole(before, cpuSnapshot(), (cmdline, pid) =>
    service.has(pid) ? 'service' : isBackendOf(cmdline, DATABASE) ? 'postgres' : undefined,
  );
  const perRequest = (role: string) =>
    result.requests > 0 ? Math.round(((used.get(role) ?? 0) * 1000 * 100) / result.requests) / 100 : 0;
  return { ...result, serviceCpuMs: perRequest('service'), postgresCpuMs: perRequest('postgres') };
}

async function main() {
  const { url, seedSeconds } = await prepareDatabase();
  const loadBefore = os.loadavg();
  const { tag, question, answer, user } = await pickTargets(url);
  const slug = encodeURIComponent(tag);
  const issue19 = (label: string, path: string, kind: Kind = 'list'): Case => ({
    label,
    path,
    kind,
    baseline: false,
  });
  const cases: Case[] = [
    { label: 'questions, page 1 (newest)', path: '/api/questions', kind: 'list' },
    { label: 'questions, page 500', path: '/api/questions?page=500', kind: 'list' },
    { label: 'questions, sort=votes', path: '/api/questions?sort=votes', kind: 'list' },
    { label: 'questions, sort=views', path: '/api/questions?sort=views', kind: 'list' },
    { label: 'questions, sort=unanswered', path: '/api/questions?sort=unanswered', kind: 'list' },
    { label: `questions, tag=${tag}`, path: `/api/questions?tag=${encodeURIComponent(tag)}`, kind: 'list' },
    {
      label: 'question + answers + comments (never cached)',
      path: `/api/questions/${question}?include=answers,comments`,
      kind: 'detail',
    },
    { label: `search "${COMMON_WORD}" (common)`, path: `/api/search?q=${COMMON_WORD}`, kind: 'search' },
    { label: `search "${RARE_WORD}" (rare)`, path: `/api/search?q=${RARE_WORD}`, kind: 'search' },
    {
      label: `questions, ${MISS_SORTS.length * MISS_PAGES} distinct pages in turn (cache-miss heavy)`,
      path: 'distinct-pages',
      kind: 'list',
    },
    issue19(
      'questions, 5 ids (never cached)',
      `/api/questions/${[0, 1, 2, 3, 4].map((k) => question + k).join(';')}`,
      'detail',
    ),
    issue19('answer by id', `/api/answers/${answer}`),
    issue19('question related', `/api/questions/${question}/related`),
    issue19('question linked', `/api/questions/${question}/linked`),
    issue19(`similar "${COMMON_WORD} problem"`, `/api/similar?title=${COMMON_WORD}%20problem`),
    issue19('question comments', `/api/questions/${question}/comments`),
    issue19('comments, page 1', '/api/comments'),
    issue19('top user questions', `/api/users/${user}/questions`),
    issue19('top user answers', `/api/users/${user}/answers`),
    issue19('top user tags', `/api/users/${user}/tags`),
    issue19('top user timeline', `/api/users/${user}/timeline`),
    issue19(`tag ${tag}`, `/api/tags/${slug}`),
    issue19(`tag ${tag} related`, `/api/tags/${slug}/related`),
    issue19(`tag ${tag} top answerers`, `/api/tags/${slug}/top-answerers`),
    issue19('questions, fromdate/todate window', '/api/questions?fromdate=2024-06-01&todate=2024-07-01'),
    issue19('site info', '/api/info'),
  ];

  const servers: BenchServer[] = [];
  try {
    // The same service twice: the default configuration (read cache on) and QA_READ_CACHE_TTL_MS=0 (off).
    const startService = async (cacheTtl?: string) => {
      const port = await freePort();
      const server = await startServer(
        'bin/start.ts',
        ['--role', 'qa'],
        {
          DATABASE_URL: url,
          REDIS_URL,
          QUEUE_PREFIX: '{agora-bench-qa}',
          HOST: '127.0.0.1',
          QA_PORT: String(port),
          RATE_LIMIT_ENABLED: 'false',
          LOG_LEVEL: 'warn',
          NODE_ENV: 'production',
          // Production refuses to start without one; a bench's own, never used for anything it signs.
          APP_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
          ...(cacheTtl === undefined ? {} : { QA_READ_CACHE_TTL_MS: cacheTtl }),
        },
        { port, readyPath: '/api/categories' },
      );
      servers.push(server);
      return server;
    };
    const cached = await startService();
    const uncached = await startService('0');
    const baselinePort = await freePort();
    const baseline = await startServer(
      'bench/lib/qa-read-baseline.ts',
      [],
      { DATABASE_URL: url, PORT: String(baselinePort) },
      { port: baselinePort, readyPath: '/health' },
    );
    servers.push(baseline);

    const rows: Array<Array<string | number>> = [];
    const missesCached: string[] = [];
    const missesUncached: string[] = [];
    const notes: string[] = [];
    for (const c of cases) {
      if (c.path !== 'distinct-pages') {
        for (const server of c.baseline === false ? [cached, uncached] : [cached, uncached, baseline]) {
          const res = await fetch(`${server.url}${c.path}`, { signal: AbortSignal.timeout(10_000) });
          if (res.status !== 200)
            throw new Error(`${server.url}${c.path} answered ${res.status}: ${await res.text()}`);
        }
        // The cached service must really answer from its cache (and the detail route must not). Views counted by
        // the detail rows are flushed to the questions now and then, and that write empties the cache: a miss is
        // asked again.
        const expected = c.kind === 'detail' ? null : 'hit';
        let seen: string | null = null;
        for (let attempt = 0; attempt < 3 && seen !== expected; attempt++) {
          const again = await fetch(`${cached.url}${c.path}`, { signal: AbortSignal.timeout(10_000) });
          seen = again.headers.get('x-cache');
        }
        if (seen !== expected) throw new Error(`${c.path}: x-cache ${seen}, expected ${expected}`);
      }
      log(`${c.label}: service (cache on)…`);
      const on = await measure(cached, c);
      log(`${c.label}: service (cache off)…`);
      const off = await measure(uncached, c);
      let b: Measured | undefined;
      if (c.baseline !== false) {
        log(`${c.label}: baseline…`);
        b = await measure(baseline, c);
      }
      const ratio = b ? Math.round((off.requestsPerSecond / b.requestsPerSecond) * 100) / 100 : undefined;
      rows.push([
        c.label,
        on.requestsPerSecond,
        on.p50,
        on.p99,
        off.requestsPerSecond,
        off.p50,
        off.p99,
        b?.requestsPerSecond ?? '—',
        b?.p50 ?? '—',
        b?.p99 ?? '—',
        ratio ?? '—',
        `${off.serviceCpuMs} / ${off.postgresCpuMs}`,
      ]);
      if (on.hitShare !== undefined)
        notes.push(
          `${c.label}: ${on.requests} requests with the cache on, ${Math.round(on.hitShare * 1000) / 10} % of them hits.`,
        );
      const p99Target = c.kind === 'search' ? 100 : 50;
      if (c.kind !== 'detail' && on.p99 >= p99Target)
        missesCached.push(`${c.label}: p99 ${on.p99} ms (target < ${p99Target} ms)`);
      if (ratio !== undefined && ratio < 0.7)
        missesUncached.push(`${c.label}: ${ratio}× baseline (target ≥ 0.7×)`);
      if (c.kind !== 'detail' && off.p99 >= p99Target)
        missesUncached.push(`${c.label}: p99 ${off.p99} ms (target < ${p99Target} ms)`);
      const failed = [on, off, b].map((r) => (r ? r.non2xx + r.errors : 0));
      if (failed.some((n) => n > 0))
        missesCached.push(
          `${c.label}: failed requests: ${failed[0]} cache on, ${failed[1]} cache off, ${failed[2]} baseline`,
        );
    }

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const list = (title: string, items: string[]) =>
      items.length === 0 ? `${title}: all met.` : `${title}:\n${items.map((m) => `- ${m}`).join('\n')}`;
    process.stdout.write(
      [
        `Machine: ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
          `PostgreSQL and Redis on the same machine. ${QUESTIONS} questions` +
          (seedSeconds === null ? ' (reused database).' : `, seeded in ${seedSeconds} s.`),
        `${CONNECTIONS} connections, ${DURATION_S} s per run; per endpoint the service with its read cache on (the ` +
          'default), the same service with QA_READ_CACHE_TTL_MS=0, then the baseline, one after the other. ' +
          `Load average (1, 5, 15 min) before the runs: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}.`,
        '',
        markdownTable(
          [
            'endpoint',
            'cache on req/s',
            'p50 ms',
            'p99 ms',
            'cache off req/s',
            'p50 ms',
            'p99 ms',
            'baseline req/s',
            'p50 ms',
            'p99 ms',
            'off ÷ baseline',
            'cache off: CPU ms/req service / PostgreSQL',
          ],
          rows,
        ),
        '',
        ...notes,
        '',
        list('Latency targets with the read cache on (default configuration)', missesCached),
        '',
        list('Without the cache (QA_READ_CACHE_TTL_MS=0): ratio and latency targets', missesUncached),
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
