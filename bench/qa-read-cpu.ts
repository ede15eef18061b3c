/**
 * CPU per uncached read (issue 19 item 9): the Q&A service of this checkout and, with `--before DIR`, of another
 * checkout (e.g. the main branch), read cache and rate limits off, on one already seeded database; per read the two
 * run in turn, `--rounds` times each, and the table gives the CPU milliseconds per request of the service's
 * processes and of the database's PostgreSQL backends, and their ratio (service ÷ PostgreSQL; the issue's target is
 * at most 1), with each run's req/s and p99. CPU per request, unlike latency, stays readable on a loaded machine; the
 * rounds show its spread.
 *
 *   npx tsx bench/qa-read-cpu.ts --database agora_bench [--before ../agora-baseline] [--duration 8] [--rounds 2]
 *                                [--deep] [--only /api/tags]
 *
 * `--deep` reads, instead of the usual set, page 1, the page at 50 % and the last page of the lists by date (all
 * questions, the unanswered ones, answers, comments, and category 1's questions and unanswered ones) and of the users
 * by name and by reputation: what a deep page number costs against the first one.
 * `--only` keeps the reads whose path contains it (`--only /related`).
 *
 * Seed the database first (e.g. `npx tsx bench/qa-read.ts --database agora_bench`, which also VACUUM ANALYZEs).
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { cpuSecondsByRole, cpuSnapshot, isBackendOf, processTree } from './lib/cpu.js';
import { runLoad } from './lib/load.js';
import { benchDatabaseUrl } from './lib/postgres.js';
import { startUncachedQa, type BenchServer } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string', default: 'agora_bench' },
    before: { type: 'string', default: '' },
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    deep: { type: 'boolean', default: false },
    only: { type: 'string', default: '' },
  },
});
const DATABASE = /^[a-z0-9_]+$/.test(values.database) ? values.database : 'agora_bench';
const DURATION_S = Math.min(Math.max(Number(values.duration), 1), 60);
const ROUNDS = Math.min(Math.max(Number(values.rounds), 1), 10);
const CONNECTIONS = Math.min(Math.max(Number(values.connections), 1), 256);
const log = (line: string) => process.stderr.write(`${line}\n`);

async function start(label: string, cwd: string | undefined): Promise<BenchServer> {
  log(`starting ${label}…`);
  return startUncachedQa(benchDatabaseUrl(DATABASE), `{agora-bench-cpu-${label}}`, cwd);
}

/** CPU ms per request of the server's processes and of the database's backends over one run. */
async function measure(server: BenchServer, path: string) {
  const before = cpuSnapshot();
  const result = await runLoad(`${server.url}${path}`, {
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
  });
  const tree = processTree(server.child.pid!);
  const used = cpuSecondsByRole(before, cpuSnapshot(), (cmdline, pid) =>
    tree.has(pid) ? 'service' : isBackendOf(cmdline, DATABASE) ? 'postgres' : undefined,
  );
  const ms = (role: string) => ((used.get(role) ?? 0) * 1000) / Math.max(result.requests, 1);
  if (result.non2xx + result.errors > 0) throw new Error(`${path}: failed requests`);
  return { service: ms('service'), postgres: ms('postgres'), rps: result.requestsPerSecond, p99: result.p99 };
}

/** Page 1, the middle page and the last page of each list by date, as the service counts them. */
async function deepPages(url: string): Promise<string[]> {
  const lists = [
    '/api/questions?sort=newest',
    '/api/questions?sort=unanswered',
    '/api/answers?sort=newest',
    '/api/comments?sort=newest',
    '/api/questions?category=1&sort=newest',
    '/api/questions?category=1&sort=unanswered',
    '/api/users?sort=name',
    '/api/users?sort=reputation',
  ];
  const paths: string[] = [];
  for (const list of lists) {
    const res = await fetch(`${url}${list}&limit=1`, { signal: AbortSignal.timeout(30_000) });
    const { total_items: total } = ((await res.json()) as { data: { pagination: { total_items: number } } })
      .data.pagination;
    const pages = Math.ceil(total / 20);
    paths.push(`${list}&page=1`, `${list}&page=${Math.ceil(pages / 2)}`, `${list}&page=${pages}`);
  }
  return paths;
}

async function main() {
  const loadBefore = os.loadavg();
  const versions: { label: string; server: BenchServer }[] = [];
  try {
    if (values.before) versions.push({ label: 'before', server: await start('before', values.before) });
    versions.push({ label: 'this checkout', server: await start('this', undefined) });
    const res = await fetch(`${versions.at(-1)!.server.url}/api/questions?sort=votes&limit=1`, {
      signal: AbortSignal.timeout(30_000),
    });
    const [question] = ((await res.json()) as { data: { questions: { id: number }[] } }).data.questions;
    const paths = (
      values.deep
        ? await deepPages(versions.at(-1)!.server.url)
        : [
            '/api/questions',
            '/api/questions?page=500',
            '/api/questions?sort=votes',
            '/api/questions?sort=unanswered',
            '/api/questions?tag=hops',
            `/api/questions/${question!.id}?include=answers,comments`,
            `/api/questions/${question!.id}/answers`,
            `/api/questions/${question!.id}/related`,
            '/api/similar?title=temperature',
            '/api/answers?sort=votes',
            '/api/comments',
            '/api/users',
            '/api/users?sort=name&page=100',
            '/api/users/1',
            '/api/users/1/timeline',
            '/api/tags',
            '/api/tags/hops',
            '/api/search?q=temperature&type=questions',
            '/api/search?q=temperature',
            '/api/info',
          ]
    ).filter((path) => path.includes(values.only));
    const rows: string[][] = [];
    for (const path of paths) {
      const runs = new Map<string, Awaited<ReturnType<typeof measure>>[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const { label, server } of versions) {
          log(`${path}: ${label}, round ${round + 1}…`);
          runs.set(label, [...(runs.get(label) ?? []), await measure(server, path)]);
        }
      }
      rows.push([
        path,
        ...versions.map(({ label }) =>
          runs
            .get(label)!
            .map(
              (r) =>
                `${r.service.toFixed(2)} / ${r.postgres.toFixed(2)} (${(r.service / r.postgres).toFixed(2)}); ` +
                `${Math.round(r.rps)} req/s, p99 ${r.p99} ms`,
            )
            .join(', '),
        ),
      ]);
    }
    process.stdout.write(
      [
        `Machine: ${os.cpus().length} cores, Node ${process.version}; PostgreSQL on the same machine. Database ` +
          `${DATABASE}; read cache and rate limits off; ${CONNECTIONS} connections, ${DURATION_S} s per run, ` +
          `${ROUNDS} rounds. Load average before the runs: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}; ` +
          `after: ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}.`,
        '',
        markdownTable(
          [
            'read',
            ...versions.map(
              ({ label }) => `${label}: CPU ms/req service / PostgreSQL (ratio); req/s, p99, per round`,
            ),
          ],
          rows,
        ),
        '',
      ].join('\n'),
    );
  } finally {
    for (const { server } of versions) await server.stop();
  }
}

main().catch((err) => {
  log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
