/**
 * Start time and resident memory of each process role, run through tsx and compiled (`npm run build`), in one
 * run; then each role idle and under a read load:
 *   npx tsx bench/memory.ts [--questions 10000] [--duration 10] [--runs 3]
 * Part 1: the build is made into a temporary directory, then every role (the Q&A service, the verification
 * service, a worker process serving every queue, the all-in-one process on the embedded PGlite) is started
 * alone `--runs` times as `node --import tsx bin/….ts` and as `node dist/bin/….js`, alternating; start time is
 * spawn to the first 2xx of its /health (a worker's on its metrics port), RSS is read 3 s later. Medians.
 * Part 2: for each variant, the three roles as separate processes on a database seeded with `--questions`,
 * RSS idle, at the peak of a `--duration` s read load on the Q&A service, and 2 s after. RSS is VmRSS from
 * /proc (Linux), sampled every 100 ms. Loopback only; bounded by --runs and --duration.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseBenchArgs } from './lib/args.js';
import { buildInto } from './lib/build.js';
import { runLoad } from './lib/load.js';
import { dropDatabase, resetBenchState } from './lib/postgres.js';
import { benchEnv, freePort, ROOT, runScript, stopChild, waitForHealth } from './lib/processes.js';
import { deleteKeys } from './lib/redis.js';
import { markdownTable } from './lib/table.js';

const { questions, duration, runs } = parseBenchArgs({
  questions: [10_000, 100, 100_000],
  duration: [10, 1, 60],
  runs: [3, 1, 10],
});
const DATABASE = 'agora_bench_memory';
const PREFIX = '{agora-bench-memory}';
const log = (line: string) => process.stderr.write(`${line}\n`);

/** How a role's entry point is run: through tsx's loader from the sources, or compiled with plain node. */
interface Variant {
  name: 'tsx' | 'compiled';
  argv(entry: string): string[];
}

/** VmRSS of one process in MiB (the role itself: children are node processes, no wrapper). */
function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kib) / 1024);
}

const children: ChildProcess[] = [];
function start(variant: Variant, entry: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...variant.argv(entry), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Samples the peak RSS of `pids` while `work` runs. */
async function peakDuring(pids: number[], work: Promise<unknown>): Promise<number[]> {
  const peaks = pids.map(rssMiB);
  let running = true;
  void work.finally(() => (running = false));
  while (running) {
    pids.forEach((pid, i) => (peaks[i] = Math.max(peaks[i]!, rssMiB(pid))));
    await sleep(100);
  }
  await work;
  return peaks;
}

interface Role {
  label: string;
  /** Starts the role alone and resolves with its process once /health answers. */
  start(variant: Variant): Promise<ChildProcess>;
  cleanup?(): Promise<void>;
}

function roles(env: Record<string, string>): Role[] {
  const service = (label: string, role: 'qa' | 'verify'): Role => ({
    label,
    async start(variant) {
      const port = await freePort();
      const portVar = role === 'qa' ? 'QA_PORT' : 'VERIFY_PORT';
      const child = start(variant, 'bin/start', ['--role', role], { ...env, [portVar]: String(port) });
      await waitForHealth(`http://127.0.0.1:${port}`, 120_000);
      return child;
    },
  });
  let dataDir: string | undefined;
  return [
    service('Q&A service (--role qa)', 'qa'),
    service('verification service (--role verify)', 'verify'),
    {
      label: 'workers (all queues)',
      async start(variant) {
        const port = await freePort();
        const child = start(variant, 'bin/workers', [], { ...env, WORKER_METRICS_PORT: String(port) });
        await waitForHealth(`http://127.0.0.1:${port}`, 120_000);
        return child;
      },
    },
    {
      label: 'all-in-one (PGlite, empty database)',
      async start(variant) {
        // A fresh embedded database each time, so that every start does the same work (migrations included).
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
        dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-bench-memory-'));
        const [qaPort, verifyPort] = [await freePort(), await freePort()];
        const child = start(variant, 'bin/start', [], {
          // The local default, as `npm start` runs it.
          NODE_ENV: 'development',
          DATABASE_URL: '',
          DATA_DIR: dataDir,
          QUEUE_PREFIX: `${PREFIX}-embedded`,
          HOST: '127.0.0.1',
          QA_PORT: String(qaPort),
          VERIFY_PORT: String(verifyPort),
          LOG_LEVEL: 'warn',
          WORKER_METRICS_PORT: '0',
          DEMO_DATA: 'false',
        });
        await waitForHealth(`http://127.0.0.1:${qaPort}`, 180_000);
        return child;
      },
      async cleanup() {
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
        await deleteKeys(`${PREFIX}-embedded`);
      },
    },
  ];
}

/** Part 1: each role alone, `runs` times per variant, alternating variants so that drift hits both alike. */
async function startTimes(variants: Variant[], env: Record<string, string>): Promise<string[][]> {
  const rows: string[][] = [];
  for (const role of roles(env)) {
    const seconds: Record<string, number[]> = { tsx: [], compiled: [] };
    const rss: Record<string, number[]> = { tsx: [], compiled: [] };
    for (let run = 0; run < runs; run++) {
      for (const variant of variants) {
        const started = performance.now();
        const child = await role.start(variant);
        seconds[variant.name]!.push((performance.now() - started) / 1000);
        await sleep(3000);
        rss[variant.name]!.push(rssMiB(child.pid!));
        await stopChild(child);
        children.splice(children.indexOf(child), 1);
        log(
          `${role.label}, ${variant.name}: ${seconds[variant.name]!.at(-1)!.toFixed(2)} s, ${rss[variant.name]!.at(-1)} MiB`,
        );
      }
    }
    await role.cleanup?.();
    const [ts, cs, tr, cr] = [
      median(seconds.tsx!),
      median(seconds.compiled!),
      median(rss.tsx!),
      median(rss.compiled!),
    ];
    const range = (v: number[]) => `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}`;
    rows.push([
      role.label,
      `${ts.toFixed(2)} (${range(seconds.tsx!)})`,
      `${cs.toFixed(2)} (${range(seconds.compiled!)})`,
      (cs / ts).toFixed(2),
      String(tr),
      String(cr),
      (cr / tr).toFixed(2),
    ]);
  }
  return rows;
}

/** Part 2: the three roles together, idle, under a read load on the Q&A service, and after. */
async function underLoad(variant: Variant, env: Record<string, string>): Promise<string[][]> {
  const [qaPort, verifyPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const qa = start(variant, 'bin/start', ['--role', 'qa'], { ...env, QA_PORT: String(qaPort) });
  const verify = start(variant, 'bin/start', ['--role', 'verify'], {
    ...env,
    VERIFY_PORT: String(verifyPort),
  });
  const workers = start(variant, 'bin/workers', [], { ...env, WORKER_METRICS_PORT: String(metricsPort) });
  await Promise.all([
    waitForHealth(`http://127.0.0.1:${qaPort}`, 120_000),
    waitForHealth(`http://127.0.0.1:${verifyPort}`, 120_000),
    waitForHealth(`http://127.0.0.1:${metricsPort}`, 120_000),
  ]);
  await sleep(3000);
  const pids = [qa.pid!, verify.pid!, workers.pid!];
  const idle = pids.map(rssMiB);
  log(`${variant.name}: read load on the Q&A service for ${duration} s…`);
  const base = `http://127.0.0.1:${qaPort}/api`;
  const load = Promise.all([
    runLoad(`${base}/questions?sort=votes&limit=50`, { connections: 32, durationSeconds: duration }),
    runLoad(`${base}/search?q=temperature`, { connections: 16, durationSeconds: duration }),
    runLoad(`${base}/questions/1?include=answers,comments`, { connections: 16, durationSeconds: duration }),
  ]);
  const peaks = await peakDuring(pids, load);
  await sleep(2000);
  const after = pids.map(rssMiB);
  await Promise.all(children.splice(0).map(stopChild));
  return ['Q&A service', 'verification service', 'workers (idle)'].map((role, i) => [
    `${role}, ${variant.name}`,
    String(idle[i]),
    String(peaks[i]),
    String(after[i]),
  ]);
}

const build = await buildInto();
try {
  const variants: Variant[] = [
    { name: 'tsx', argv: (entry) => ['--import', 'tsx', `${entry}.ts`] },
    { name: 'compiled', argv: (entry) => [path.join(build.dir, `${entry}.js`)] },
  ];
  const databaseUrl = await resetBenchState(DATABASE, PREFIX);
  const env = {
    ...benchEnv(databaseUrl, PREFIX),
    // Production refuses to start without a real secret; this one exists only for the bench's processes.
    APP_SECRET: randomBytes(36).toString('base64'),
    RATE_LIMIT_ENABLED: 'false',
    WORKER_METRICS_PORT: '0',
  };
  log(`seeding ${questions} questions…`);
  await runScript('bin/seed.ts', ['--questions', String(questions)], env, 'stderr');

  const starts = await startTimes(variants, env);
  const loaded = [...(await underLoad(variants[0]!, env)), ...(await underLoad(variants[1]!, env))];
  console.log(`Node ${process.version}; ${runs} starts per role and variant (median, range); RSS in MiB\n`);
  console.log(
    markdownTable(
      [
        'process',
        'start s, tsx',
        'start s, compiled',
        'ratio',
        'idle RSS, tsx',
        'idle RSS, compiled',
        'ratio',
      ],
      starts,
    ),
  );
  console.log(
    `\n${questions} seeded questions; read load ${duration} s (32 + 16 + 16 connections) on the Q&A service\n`,
  );
  console.log(markdownTable(['process', 'idle RSS', 'peak RSS under load', 'RSS after load'], loaded));
} finally {
  await Promise.all(children.map(stopChild));
  build.remove();
  await dropDatabase(DATABASE);
  await deleteKeys(PREFIX);
}
