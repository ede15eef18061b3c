/**
 * Resident memory of each process role, idle and under a read load:
 *   npx tsx bench/memory.ts [--questions 10000] [--duration 10]
 * The Q&A service, the verification service and a worker process (all queues) run as separate processes on a
 * database seeded with `--questions`; then `npm start`'s all-in-one process on the embedded PGlite. RSS is read
 * from /proc (Linux) every 100 ms. Loopback only; bounded by --duration.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseBenchArgs } from './lib/args.js';
import { runLoad } from './lib/load.js';
import { dropDatabase, resetBenchState } from './lib/postgres.js';
import { benchEnv, freePort, ROOT, runScript, stopChild, waitForHealth } from './lib/processes.js';
import { deleteKeys } from './lib/redis.js';
import { markdownTable } from './lib/table.js';

const { questions, duration } = parseBenchArgs({ questions: [10_000, 100, 100_000], duration: [10, 1, 60] });
const DATABASE = 'agora_bench_memory';
const PREFIX = '{agora-bench-memory}';
const log = (line: string) => process.stderr.write(`${line}\n`);

/** VmRSS of one process in MiB (the role itself: children run as `node --import tsx`, no wrapper process). */
function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kib) / 1024);
}

const children: ChildProcess[] = [];
function start(script: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

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

async function separateRoles(): Promise<string[][]> {
  const databaseUrl = await resetBenchState(DATABASE, PREFIX);
  const env = { ...benchEnv(databaseUrl, PREFIX), RATE_LIMIT_ENABLED: 'false', WORKER_METRICS_PORT: '0' };
  log(`seeding ${questions} questions…`);
  await runScript('bin/seed.ts', ['--questions', String(questions)], env, 'stderr');
  const [qaPort, verifyPort] = [await freePort(), await freePort()];
  const qa = start('bin/start.ts', ['--role', 'qa'], { ...env, QA_PORT: String(qaPort) });
  const verify = start('bin/start.ts', ['--role', 'verify'], { ...env, VERIFY_PORT: String(verifyPort) });
  const workers = start('workers/main.ts', [], env);
  await Promise.all([
    waitForHealth(`http://127.0.0.1:${qaPort}`, 60_000),
    waitForHealth(`http://127.0.0.1:${verifyPort}`, 60_000),
  ]);
  await sleep(3000);
  const pids = [qa.pid!, verify.pid!, workers.pid!];
  const idle = pids.map(rssMiB);
  log(`read load on the Q&A service for ${duration} s…`);
  const base = `http://127.0.0.1:${qaPort}/api`;
  const load = Promise.all([
    runLoad(`${base}/questions?sort=votes&limit=50`, { connections: 32, durationSeconds: duration }),
    runLoad(`${base}/search?q=temperature`, { connections: 16, durationSeconds: duration }),
    runLoad(`${base}/questions/1?include=answers,comments`, { connections: 16, durationSeconds: duration }),
  ]);
  const peaks = await peakDuring(pids, load);
  await sleep(2000);
  const after = pids.map(rssMiB);
  const [list, search, detail] = await load;
  log(`load: ${list!.requestsPerSecond} + ${search!.requestsPerSecond} + ${detail!.requestsPerSecond} req/s`);
  await Promise.all(children.splice(0).map(stopChild));
  return [
    'Q&A service (--role qa)',
    'verification service (--role verify)',
    'workers (all queues, idle)',
  ].map((role, i) => [role, String(idle[i]), String(peaks[i]), String(after[i])]);
}

async function allInOne(): Promise<string[]> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-bench-memory-'));
  try {
    const [qaPort, verifyPort] = [await freePort(), await freePort()];
    const child = start('bin/start.ts', [], {
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      QUEUE_PREFIX: `${PREFIX}-embedded`,
      HOST: '127.0.0.1',
      QA_PORT: String(qaPort),
      VERIFY_PORT: String(verifyPort),
      LOG_LEVEL: 'warn',
      WORKER_METRICS_PORT: '0',
    });
    await waitForHealth(`http://127.0.0.1:${qaPort}`, 120_000);
    await sleep(3000);
    const idle = rssMiB(child.pid!);
    await Promise.all(children.splice(0).map(stopChild));
    return ['all-in-one `npm start` (PGlite, empty database)', String(idle), '—', '—'];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await deleteKeys(`${PREFIX}-embedded`);
  }
}

try {
  const rows = [...(await separateRoles()), await allInOne()];
  console.log(
    `${questions} seeded questions; read load ${duration} s (32 + 16 + 16 connections); RSS in MiB, Node ${process.version}\n`,
  );
  console.log(markdownTable(['process', 'idle RSS', 'peak RSS under load', 'RSS after load'], rows));
} finally {
  await Promise.all(children.map(stopChild));
  await dropDatabase(DATABASE);
  await deleteKeys(PREFIX);
}
