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
import os from 'node:os';
import { parseBenchArgs } from './lib/args.js';
import { measureChild } from './lib/child-cost.js';
import { dropDatabase, recreateDatabase } from './lib/postgres.js';
import { ROOT } from './lib/processes.js';
import { markdownTable } from './lib/table.js';

const args = parseBenchArgs(
  { questions: [100_000, 100, 1_000_000] },
  { database: 'agora_bench_seed', before: '', keep: 'no' },
);
const log = (line: string) => process.stderr.write(`${line}\n`);

async function seed(dir: string, database: string) {
  const databaseUrl = await recreateDatabase(database);
  const cost = await measureChild({
    dir,
    script: 'bin/seed.ts',
    args: ['--questions', String(args.questions)],
    databaseUrl,
    database,
  });
  return { ...cost, summary: /Seeded .*/.exec(cost.output)?.[0] ?? '' };
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
