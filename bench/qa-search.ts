/**
 * Uncached search (issue 19 item 8, issue 22 item 4): the Q&A service with its read cache and rate limits off, at 64
 * connections, on one seeded database, for a set of searches (a common word, a rare one, two words, a phrase, a
 * deep page, each kind). With `--before DIR` (another checkout of the project, e.g. the main branch) the same
 * searches also run against that checkout's service on the same database, turn by turn, so the figures compare
 * two versions measured in one run. Prints req/s, p50, p99 and CPU milliseconds per request of the service and of
 * PostgreSQL, as a markdown section for docs/benchmarks.md.
 *
 *   npx tsx bench/qa-search.ts --database agora_search_100k --questions 100000 [--before ../agora-baseline]
 *       [--duration 8] [--connections 64] [--reuse yes]
 *
 * Without `--reuse yes` the database is recreated and seeded (then VACUUM ANALYZE, as a database in use). Needs
 * PostgreSQL (BENCH_POSTGRES_URL) and Redis (BENCH_REDIS_URL) on loopback.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../shared/db/client.js';
import { migrateDatabase } from '../shared/db/migrate.js';
import { seedDatabase } from '../shared/demo/seed.js';
import { COMMON_WORD, RARE_WORD } from '../shared/demo/topics.js';
import { parseBenchArgs } from './lib/args.js';
import { cpuSecondsByRole, cpuSnapshot, isBackendOf, processTree } from './lib/cpu.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { benchDatabaseUrl, recreateDatabase } from './lib/postgres.js';
import { ROOT, startUncachedQa, type BenchServer } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const args = parseBenchArgs(
  { questions: [100_000, 100, 1_000_000], duration: [8, 1, 60], connections: [64, 1, 1024] },
  { database: 'agora_bench_search', before: '', reuse: 'no' },
);
const log = (line: string) => process.stderr.write(`${line}\n`);

const SEARCHES: [string, string][] = [
  [`"${COMMON_WORD}" (common), type=all`, `q=${COMMON_WORD}`],
  [`"${COMMON_WORD}", type=questions`, `q=${COMMON_WORD}&type=questions`],
  [`"${COMMON_WORD}", type=answers`, `q=${COMMON_WORD}&type=answers`],
  [`"${COMMON_WORD}", page 10`, `q=${COMMON_WORD}&page=10`],
  [`"${COMMON_WORD} problem" (two common words)`, `q=${COMMON_WORD}%20problem`],
  [`"\\"best way\\"" (phrase)`, `q=%22best%20way%22`],
  [`"${RARE_WORD}" (rare)`, `q=${RARE_WORD}`],
];

async function prepare(): Promise<string> {
  if (args.reuse === 'yes') return benchDatabaseUrl(args.database);
  const url = await recreateDatabase(args.database);
  const database = await openDatabase({ databaseUrl: url, dataDir: '' });
  try {
    await migrateDatabase(database);
    log(`seeding ${args.questions} questions…`);
    await seedDatabase(database, { questions: args.questions });
    await database.query(sql`VACUUM (ANALYZE)`);
    return url;
  } finally {
    await database.close();
  }
}

const start = (url: string, cwd: string): Promise<BenchServer> =>
  startUncachedQa(url, '{agora-bench-search}', cwd);

interface Measured extends LoadResult {
  serviceCpuMs: number;
  postgresCpuMs: number;
}

async function measure(server: BenchServer, path: string): Promise<Measured> {
  const res = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(30_000) });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  const before = cpuSnapshot();
  const result = await runLoad(`${server.url}${path}`, {
    connections: args.connections,
    durationSeconds: args.duration,
  });
  const service = processTree(server.child.pid!);
  const used = cpuSecondsByRole(before, cpuSnapshot(), (cmdline, pid) =>
    service.has(pid) ? 'service' : isBackendOf(cmdline, args.database) ? 'postgres' : undefined,
  );
  const perRequest = (role: string) =>
    result.requests > 0 ? Math.round(((used.get(role) ?? 0) * 1000 * 100) / result.requests) / 100 : 0;
  return { ...result, serviceCpuMs: perRequest('service'), postgresCpuMs: perRequest('postgres') };
}

const commitOf = (dir: string) =>
  execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();

async function main() {
  const url = await prepare();
  const versions = [{ label: 'this checkout', dir: ROOT }];
  if (args.before) versions.unshift({ label: 'before', dir: args.before });
  const loadBefore = os.loadavg();
  const servers = await Promise.all(versions.map((v) => start(url, v.dir)));
  const rows: (string | number)[][] = [];
  try {
    for (const [label, query] of SEARCHES) {
      const row: (string | number)[] = [label];
      // Turn by turn, so that a change of the machine's load falls on both versions alike.
      for (const [i, server] of servers.entries()) {
        log(`${label}: ${versions[i]!.label}…`);
        const m = await measure(server, `/api/search?${query}`);
        if (m.non2xx + m.errors > 0) log(`  ${m.non2xx} non-2xx, ${m.errors} errors`);
        row.push(m.requestsPerSecond, m.p50, m.p99, `${m.serviceCpuMs} / ${m.postgresCpuMs}`);
      }
      rows.push(row);
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  const headers = ['search'];
  for (const v of versions) {
    const name = `${v.label} (${commitOf(v.dir)})`;
    headers.push(`${name} req/s`, 'p50 ms', 'p99 ms', 'CPU ms/req service / PostgreSQL');
  }
  process.stdout.write(
    [
      `Machine: ${os.cpus().length} cores, Node ${process.version}; PostgreSQL and Redis on the same machine, shared. ` +
        `Database ${args.database} (${args.questions} questions as seeded). Read cache off, rate limits off, ` +
        `${args.connections} connections, ${args.duration} s per search and version. ` +
        `Load average before the runs: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}.`,
      '',
      markdownTable(headers, rows),
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
