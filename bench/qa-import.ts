/**
 * `npm run import:stackexchange` on a generated dump of N posts (issue 22 item 5): the bench writes the dump
 * (bench/lib/stackexchange-dump.ts) into a temporary folder, imports it into a database of its own and reports
 * wall time, posts per second, CPU seconds of the importing process and of its PostgreSQL backends, and peak RSS.
 * With `--before DIR` another checkout imports the same dump into a database of its own first; with `--seed yes`
 * this checkout then seeds as many posts (questions + answers) into another database: the rates compare in one run.
 *
 *   npx tsx bench/qa-import.ts --posts 100000 [--before ../agora-baseline] [--seed yes] [--database agora_bench_import] [--keep yes]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBenchArgs } from './lib/args.js';
import { measureChild, type ChildCost } from './lib/child-cost.js';
import { dropDatabase, recreateDatabase } from './lib/postgres.js';
import { ROOT } from './lib/processes.js';
import { writeStackExchangeDump } from './lib/stackexchange-dump.js';
import { markdownTable } from './lib/table.js';

const args = parseBenchArgs(
  { posts: [100_000, 100, 3_000_000] },
  { database: 'agora_bench_import', before: '', seed: 'no', keep: 'no' },
);
const log = (line: string) => process.stderr.write(`${line}\n`);
const round = (n: number) => Math.round(n * 10) / 10;

async function main() {
  const loadBefore = os.loadavg();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agora-dump-'));
  const rows: (string | number)[][] = [];
  const row = (label: string, posts: number, r: ChildCost) =>
    rows.push([
      label,
      posts,
      round(r.seconds),
      Math.round(posts / r.seconds),
      round(r.nodeCpu),
      round(r.postgresCpu),
      Math.round((1e6 * (r.nodeCpu + r.postgresCpu)) / posts),
      r.peakRssMiB,
    ]);
  try {
    log(`writing a dump of ${args.posts} posts into ${dir}…`);
    const dump = await writeStackExchangeDump(dir, args.posts);
    log(`  ${JSON.stringify(dump)}`);

    const versions = [{ label: 'import, this checkout', dir: ROOT, database: args.database }];
    if (args.before)
      versions.unshift({
        label: `import, before (${args.before})`,
        dir: args.before,
        database: `${args.database}_before`,
      });
    for (const v of versions) {
      log(`${v.label}: importing it into ${v.database}…`);
      const imported = await measureChild({
        dir: v.dir,
        script: 'bin/import-stackexchange.ts',
        args: [dir],
        databaseUrl: await recreateDatabase(v.database),
        database: v.database,
      });
      log(`  ${/Imported .*/.exec(imported.output)?.[0] ?? ''}`);
      row(v.label, dump.posts, imported);
      if (args.keep !== 'yes') await dropDatabase(v.database);
    }

    if (args.seed === 'yes') {
      // The seed's posts per question (1 + answers) is about 2.5: seed as many questions as give the dump's posts.
      const database = `${args.database}_seed`;
      const probe = Math.max(100, Math.round(dump.questions));
      log(`seeding ${probe} questions into ${database}…`);
      const seeded = await measureChild({
        dir: ROOT,
        script: 'bin/seed.ts',
        args: ['--questions', String(probe)],
        databaseUrl: await recreateDatabase(database),
        database,
      });
      const summary = /Seeded .*/.exec(seeded.output)?.[0] ?? '';
      log(`  ${summary}`);
      const answers = Number(/(\d+) answers/.exec(summary)?.[1] ?? 0);
      row('seed, this checkout', probe + answers, seeded);
      if (args.keep !== 'yes') await dropDatabase(database);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    [
      `Machine: ${os.cpus().length} cores, Node ${process.version}; PostgreSQL on the same machine, shared. ` +
        `Load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ` +
        `${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}.`,
      '',
      markdownTable(
        [
          'run',
          'posts',
          'wall s',
          'posts/s',
          'CPU s (Node)',
          'PostgreSQL CPU s',
          'CPU µs per post',
          'peak RSS MiB',
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
