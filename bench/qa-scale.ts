/**
 * Q&A reads at two sizes (issue 22): seeds a small and a large database (or reuses them), starts the Q&A service on
 * each with its read cache off and rate limits off, runs the same read set against each at 64 connections, and
 * prints per read req/s, p50 and p99 at both sizes, the large/small p99 ratio, and CPU milliseconds per request of
 * the service and of the database's PostgreSQL backends at both sizes with their large/small ratio (the cost that
 * stays readable on a shared machine). Deep pages (50 % and 100 % of a list) and cursors are in the set,
 * so a read whose cost grows with the data shows as a ratio well above 1.
 *
 *   npx tsx bench/qa-scale.ts [--small 20000] [--large 200000] [--duration 3] [--connections 64] [--reuse yes]
 *   npx tsx bench/qa-scale.ts --large 1000000      # the size
 *   npx tsx bench/qa-scale.ts --reuse yes --only related,answerers   # some reads only
 *
 * `--reuse yes` keeps already seeded agora_scale_small / agora_scale_large databases. Needs PostgreSQL
 * (BENCH_POSTGRES_URL) and Redis (BENCH_REDIS_URL) on loopback. Prints a markdown section for docs/benchmarks.md.
 */
import os from 'node:os';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../shared/db/client.js';
import { migrateDatabase } from '../shared/db/migrate.js';
import { seedDatabase } from '../shared/demo/seed.js';
import { COMMON_WORD } from '../shared/demo/topics.js';
import { parseBenchArgs } from './lib/args.js';
import { cpuSecondsByRole, cpuSnapshot, isBackendOf, processTree } from './lib/cpu.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { benchDatabaseUrl, recreateDatabase, waitUntilIdle } from './lib/postgres.js';
import { startUncachedQa, type BenchServer } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const args = parseBenchArgs(
  {
    small: [20_000, 100, 1_000_000],
    large: [200_000, 100, 1_000_000],
    duration: [3, 1, 20],
    connections: [64, 1, 1024],
  },
  { reuse: 'no', only: '' },
);
/** `--only related,answerers`: the reads whose label contains one of these words (all reads without it). */
const only = args.only ? args.only.split(',').filter(Boolean) : [];
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Size {
  label: string;
  questions: number;
  database: string;
}
const SIZES: Size[] = [
  { label: 'small', questions: args.small, database: 'agora_scale_small' },
  { label: 'large', questions: args.large, database: 'agora_scale_large' },
];

async function prepare(size: Size): Promise<string> {
  if (args.reuse === 'yes') return benchDatabaseUrl(size.database);
  const url = await recreateDatabase(size.database);
  const database = await openDatabase({ databaseUrl: url, dataDir: '' });
  try {
    await migrateDatabase(database);
    log(`${size.label}: seeding ${size.questions} questions…`);
    const summary = await seedDatabase(database, { questions: size.questions });
    log(`${size.label}: seeded in ${summary.seconds} s`);
    // A freshly loaded table has no visibility map (index-only scans would read the heap): as a database in use.
    await database.query(sql`VACUUM (ANALYZE)`);
    return url;
  } finally {
    await database.close();
  }
}

/** The read set, as URL paths, for a database: deep pages are computed from its own totals. */
async function readSet(server: BenchServer, url: string): Promise<[string, string][]> {
  const database = await openDatabase({ databaseUrl: url, dataDir: '' });
  let tag: string;
  let category: number;
  let question: number;
  let user: number;
  try {
    [{ slug: tag }] = (await database.query<{ slug: string }>(
      sql`SELECT slug FROM tags ORDER BY questions_count DESC, id LIMIT 1`,
    )) as [{ slug: string }];
    [{ id: category }] = (await database.query<{ id: number }>(
      sql`SELECT id FROM categories ORDER BY questions_count DESC, id LIMIT 1`,
    )) as [{ id: number }];
    [{ id: question }] = (await database.query<{ id: number }>(
      sql`SELECT id FROM questions WHERE answers_count >= 3 ORDER BY id LIMIT 1`,
    )) as [{ id: number }];
    [{ id: user }] = (await database.query<{ id: number }>(
      sql`SELECT id FROM users ORDER BY reputation DESC, id LIMIT 1`,
    )) as [{ id: number }];
  } finally {
    await database.close();
  }
  const json = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(30_000) });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as {
      data: { pagination: { total_pages: number; next_cursor: string | null } };
    };
  };
  const pages = async (path: string) => (await json(path)).data.pagination.total_pages;
  const sep = (path: string) => (path.includes('?') ? '&' : '?');
  const deep = async (label: string, path: string): Promise<[string, string][]> => {
    const last = await pages(path);
    const middle = Math.max(1, Math.ceil(last / 2));
    const cursor = (await json(`${path}${sep(path)}page=${middle}`)).data.pagination.next_cursor;
    return [
      [`${label}, page 1`, path],
      [`${label}, page ${middle} (50 %)`, `${path}${sep(path)}page=${middle}`],
      [`${label}, page ${last} (last)`, `${path}${sep(path)}page=${last}`],
      ...(cursor
        ? ([[`${label}, cursor at 50 %`, `${path}${sep(path)}cursor=${cursor}`]] as [string, string][])
        : []),
    ];
  };
  return [
    ...(await deep('questions newest', '/api/questions')),
    ...(await deep('questions votes', '/api/questions?sort=votes')),
    ...(await deep('questions views', '/api/questions?sort=views')),
    ...(await deep('questions unanswered', '/api/questions?sort=unanswered')),
    ...(await deep(`questions tag=${tag} votes`, `/api/questions?tag=${encodeURIComponent(tag)}&sort=votes`)),
    ...(await deep(`questions tag=${tag} views`, `/api/questions?tag=${encodeURIComponent(tag)}&sort=views`)),
    ...(await deep(`questions category=${category} views`, `/api/questions?category=${category}&sort=views`)),
    ...(await deep(`questions category=${category} newest`, `/api/questions?category=${category}`)),
    ...(await deep(
      `questions category=${category} unanswered`,
      `/api/questions?category=${category}&sort=unanswered`,
    )),
    ...(await deep('users reputation', '/api/users?sort=reputation')),
    ...(await deep('users newest', '/api/users?sort=newest')),
    ...(await deep('users name', '/api/users?sort=name')),
    ['tags popular, page 1', '/api/tags'],
    ['question + answers + comments', `/api/questions/${question}?include=answers,comments`],
    ['question answers', `/api/questions/${question}/answers`],
    [`search "${COMMON_WORD}"`, `/api/search?q=${COMMON_WORD}`],
    // Issue 19's reads.
    ['questions 5 ids', `/api/questions/${[0, 1, 2, 3, 4].map((k) => question + k).join(';')}`],
    ['question related', `/api/questions/${question}/related`],
    ['question linked', `/api/questions/${question}/linked`],
    [`similar "${COMMON_WORD}"`, `/api/similar?title=${COMMON_WORD}%20problem`],
    ['comments newest, page 1', '/api/comments'],
    ...(await deep('answers votes', '/api/answers?sort=votes')),
    ...(await deep('comments votes', '/api/comments?sort=votes')),
    ['top user questions', `/api/users/${user}/questions`],
    ['top user answers', `/api/users/${user}/answers`],
    ['top user tags', `/api/users/${user}/tags`],
    ['top user timeline', `/api/users/${user}/timeline`],
    [`tag ${tag}`, `/api/tags/${encodeURIComponent(tag)}`],
    [`tag ${tag} related`, `/api/tags/${encodeURIComponent(tag)}/related`],
    [`tag ${tag} top answerers`, `/api/tags/${encodeURIComponent(tag)}/top-answerers`],
    ['site info', '/api/info'],
  ];
}

interface Measured extends LoadResult {
  serviceCpuMs: number;
  postgresCpuMs: number;
}

async function measure(server: BenchServer, database: string, path: string): Promise<Measured> {
  const before = cpuSnapshot();
  const result = await runLoad(`${server.url}${path}`, {
    connections: args.connections,
    durationSeconds: args.duration,
  });
  await waitUntilIdle(database);
  // The service's own processes and this database's backends only: the machine may be shared.
  const service = processTree(server.child.pid!);
  const used = cpuSecondsByRole(before, cpuSnapshot(), (cmdline, pid) =>
    service.has(pid) ? 'service' : isBackendOf(cmdline, database) ? 'postgres' : undefined,
  );
  const perRequest = (role: string) =>
    result.requests > 0 ? Math.round(((used.get(role) ?? 0) * 1000 * 100) / result.requests) / 100 : 0;
  return { ...result, serviceCpuMs: perRequest('service'), postgresCpuMs: perRequest('postgres') };
}

const start = (url: string): Promise<BenchServer> => startUncachedQa(url, '{agora-bench-scale}');

async function main() {
  const urls: string[] = [];
  for (const size of SIZES) urls.push(await prepare(size));
  const loadBefore = os.loadavg();
  const results: Map<string, Measured>[] = [];
  let labels: string[] = [];
  for (const [i, size] of SIZES.entries()) {
    const server = await start(urls[i]!);
    try {
      // Reads are named by the large database's pages; each size measures its own deep pages under that row.
      const set = (await readSet(server, urls[i]!)).filter(
        ([label]) => only.length === 0 || only.some((word) => label.includes(word)),
      );
      if (i === 0) labels = set.map(([label]) => label.replace(/page \d+/, 'page N'));
      const measured = new Map<string, Measured>();
      for (const [j, [label, path]] of set.entries()) {
        log(`${size.label}: ${label}…`);
        const result = await measure(server, size.database, path);
        if (result.non2xx + result.errors > 0) log(`  ${result.non2xx} non-2xx, ${result.errors} errors`);
        measured.set(labels[j] ?? label, result);
      }
      results.push(measured);
    } finally {
      await server.stop();
    }
  }

  const rows = labels.map((label) => {
    const [s, l] = [results[0]!.get(label), results[1]!.get(label)];
    const ratio = s && l && s.p99 > 0 ? Math.round((l.p99 / s.p99) * 100) / 100 : '—';
    const cpu = (m: Measured) => m.serviceCpuMs + m.postgresCpuMs;
    const cpuRatio = s && l && cpu(s) > 0 ? Math.round((cpu(l) / cpu(s)) * 100) / 100 : '—';
    return [
      label,
      s?.requestsPerSecond ?? '—',
      s?.p50 ?? '—',
      s?.p99 ?? '—',
      l?.requestsPerSecond ?? '—',
      l?.p50 ?? '—',
      l?.p99 ?? '—',
      ratio,
      s ? `${s.serviceCpuMs} / ${s.postgresCpuMs}` : '—',
      l ? `${l.serviceCpuMs} / ${l.postgresCpuMs}` : '—',
      cpuRatio,
    ];
  });
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(
    [
      `Machine: ${os.cpus().length} cores (${cpu}), Node ${process.version}; PostgreSQL and Redis on the same machine, ` +
        `shared. Sizes: ${args.small} and ${args.large} questions (seed's proportions of users, answers, tags). ` +
        `Read cache off, rate limits off, ${args.connections} connections, ${args.duration} s per read. ` +
        `Load average before the runs: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}.`,
      '',
      markdownTable(
        [
          'read',
          `${args.small} req/s`,
          'p50 ms',
          'p99 ms',
          `${args.large} req/s`,
          'p50 ms',
          'p99 ms',
          'p99 ratio large/small',
          'CPU ms/req service / PostgreSQL (small)',
          'CPU ms/req service / PostgreSQL (large)',
          'CPU ratio large/small',
        ],
        rows,
      ),
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
