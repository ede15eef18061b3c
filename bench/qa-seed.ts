/**
 * `npm run seed` at a given size (issue 22 item 5), timed with the CPU it costs: wall time, questions per second,
 * CPU seconds of the seeding process (Node) and of its PostgreSQL backend, and the seeding process's peak RSS.
 * With `--before DIR` (another checkout, e.g. the main branch) that checkout seeds a database of its own first, in
 * the same run, so the figures compare two versions under the same conditions. The CPU figures hold up on a shared
 * machine where wall time does not: they count only the processes of the seed.
 *
 *   npx tsx bench/qa-seed.ts --questions 100000 [--before ../agora-baseline] [--database agora_bench_seed] [--keep yes]
 *
 * Each version seeds `<database>_before` / `<database>` (recreated; dropped at the end unless `--keep yes`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { parseBenchArgs } from './lib/args.js';
import { dropDatabase, recreateDatabase } from './lib/postgres.js';
import { ROOT } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const args = parseBenchArgs(
  { questions: [100_000, 100, 1_000_000] },
  { database: 'agora_bench_seed', before: '', keep: 'no' },
);
const log = (line: string) => process.stderr.write(`${line}\n`);
const TICKS_PER_SECOND = 100;

interface Sample {
  ticks: number;
  rssKiB: number;
}

/** CPU ticks and RSS of the processes whose command line matches, read from /proc. */
function sample(match: (cmdline: string) => boolean): Map<number, Sample> {
  const found = new Map<number, Sample>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!match(cmdline)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1];
      found.set(Number(name), { ticks: Number(fields[11]) + Number(fields[12]), rssKiB: Number(rss ?? 0) });
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

interface Result {
  seconds: number;
  nodeCpu: number;
  postgresCpu: number;
  peakRssMiB: number;
  summary: string;
}

async function seed(dir: string, database: string): Promise<Result> {
  const url = await recreateDatabase(database);
  const started = performance.now();
  const child = spawn(
    `${dir}/node_modules/.bin/tsx`,
    ['bin/seed.ts', '--questions', String(args.questions)],
    {
      cwd: dir,
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  // The highest tick count seen per process: a backend is gone once the seed disconnects.
  const node = new Map<number, Sample>();
  const postgres = new Map<number, Sample>();
  let peakRss = 0;
  const poll = () => {
    const seeders = sample((c) => c.includes('bin/seed.ts') && !c.includes('qa-seed'));
    for (const [pid, s] of seeders) node.set(pid, s);
    peakRss = Math.max(peakRss, ...[...seeders.values()].map((s) => s.rssKiB));
    for (const [pid, s] of sample((c) => c.startsWith('postgres: ') && c.includes(` ${database} `)))
      postgres.set(pid, s);
  };
  const timer = setInterval(poll, 250);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(timer);
  if (code !== 0) throw new Error(`seed in ${dir} exited with ${code}:\n${output}`);
  const seconds = (performance.now() - started) / 1000;
  const cpu = (m: Map<number, Sample>) => [...m.values()].reduce((n, s) => n + s.ticks, 0) / TICKS_PER_SECOND;
  return {
    seconds,
    nodeCpu: cpu(node),
    postgresCpu: cpu(postgres),
    peakRssMiB: Math.round(peakRss / 1024),
    summary: /Seeded .*/.exec(output)?.[0] ?? '',
  };
}

async function main() {
  const versions = [{ label: 'this checkout', dir: ROOT, database: args.database }];
  if (args.before)
    versions.unshift({ label: 'before', dir: args.before, database: `${args.database}_before` });
  const loadBefore = os.loadavg();
  const rows: (string | number)[][] = [];
  let summary = '';
  for (const v of versions) {
    log(`${v.label}: seeding ${args.questions} questions into ${v.database}…`);
    const r = await seed(v.dir, v.database);
    log(`  ${r.summary}`);
    summary = r.summary;
    rows.push([
      `${v.label} (${v.dir})`,
      Math.round(r.seconds * 10) / 10,
      Math.round(args.questions / r.seconds),
      Math.round(r.nodeCpu * 10) / 10,
      Math.round(r.postgresCpu * 10) / 10,
      r.peakRssMiB,
    ]);
    if (args.keep !== 'yes') await dropDatabase(v.database);
  }
  process.stdout.write(
    [
      `Machine: ${os.cpus().length} cores, Node ${process.version}; PostgreSQL on the same machine, shared. ` +
        `${summary}. Load average before the runs: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}.`,
      '',
      markdownTable(
        ['version', 'wall s', 'questions/s', 'seed CPU s (Node)', 'PostgreSQL CPU s', 'peak RSS MiB'],
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
