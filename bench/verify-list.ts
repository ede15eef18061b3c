/**
 * Verification lists through the public API only (POST /lists, GET /lists/{id}, DELETE /lists/{id}), so it keeps
 * measuring the same thing whatever the dispatch underneath becomes.
 *
 *   npx tsx bench/verify-list.ts [--size 100000] [--workers 1,2,4] [--delay 50] [--memory 10000,1000000]
 *                                [--memory-seconds 20] [--service-heap MiB]
 *
 * The mail world: a Zipf-shaped domain population (domain of rank r gets a share ∝ 1/r^1.1 of the list, at least
 * one address: a few domains with thousands of addresses, a long tail with one or two), size/20 domains, spread
 * over 200 MX hosts (127.0.12.x, one shared port; rank r on host (r − 1) mod 200: the big domains each have a
 * host, the tail shares). Every SMTP reply comes --delay ms late; the cap is 2 connections per MX
 * (VERIFY_MX_CONCURRENCY). Mailboxes u<n> exist, the catch-all probe's random address is refused.
 *
 * Throughput: the whole list is uploaded (text/plain, streamed) and the clock runs from the upload's first byte to
 * the list's `completed`, with 1, 2 and 4 worker processes (`workers/main.ts`, every queue) beside the verification
 * service (`bin/start.ts --role verify`), each run on a fresh database and queue prefix. Reported: the wall time,
 * its ratio to the per-MX lower bound, SMTP connections per address. The lower bound is the least any prober
 * needs: per host, its addresses plus one catch-all probe per domain, in sessions of at most 20 RCPTs, each session
 * 4 more replies (greeting, EHLO, MAIL FROM, QUIT): max over hosts of (rcpts + 4 × ⌈rcpts / 20⌉) × delay / cap.
 *
 * Memory: for each --memory size (empty: skipped), a list of that many addresses (same population shape) is
 * uploaded to the service with 2 workers; the peak RSS (VmRSS from /proc, every 200 ms) of the service during the
 * upload, and of the service and each worker during the upload and the next --memory-seconds of verification, then
 * the list is cancelled (a 1M list would take hours to verify at 50 ms a reply). Flat in the list's size is the
 * target: the upload is streamed into PostgreSQL and chunks hold 100 addresses.
 *
 * Needs PostgreSQL (BENCH_POSTGRES_URL) and Redis (BENCH_REDIS_URL); database agora_bench_verify_list, recreated.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startDnsServer, type Zone } from '../test/support/dns-server.js';
import { startSlowSmtp, type SlowSmtpWorld } from '../test/verify-service/slow-smtp.js';
import { parseBenchArgs } from './lib/args.js';
import { resetBenchState } from './lib/postgres.js';
import { benchEnv, freePort, ROOT, runScript, stopChild, waitFor, waitForHealth } from './lib/processes.js';
import { deleteKeys, REDIS_URL } from './lib/redis.js';

const args = parseBenchArgs(
  {
    size: [100_000, 100, 1_000_000],
    delay: [50, 0, 1000],
    'memory-seconds': [20, 0, 600],
    'service-heap': [0, 0, 65_536],
  },
  { workers: '1,2,4', memory: '10000,1000000' },
);
const SIZE = args.size;
const DELAY_MS = args.delay;
const WORKER_COUNTS = args.workers
  .split(',')
  .filter(Boolean)
  .map((n) => Math.min(Math.max(Number(n), 1), 8));
const MEMORY_SIZES = args.memory
  .split(',')
  .filter(Boolean)
  .map((n) => Math.min(Math.max(Number(n), 100), 1_000_000));
const MEMORY_SECONDS = args['memory-seconds'];
// The service's V8 old-space limit in MiB (0: Node's default): what the service's peak RSS is made of, live memory
// or garbage not collected yet, shows when the limit is lowered.
const SERVICE_HEAP_MIB = args['service-heap'];

const HOSTS = 200;
const MX_CAP = 2;
const MAX_RCPT_PER_SESSION = 20;
const SESSION_OVERHEAD = 4;
const ZIPF_S = 1.1;
const DATABASE = 'agora_bench_verify_list';
const RUN_TIMEOUT_MS = 60 * 60_000;

const log = (line: string) => process.stderr.write(`${line}\n`);
const hostIp = (h: number) => `127.0.12.${h + 1}`;

/** Addresses per domain rank for a list of `size`: ∝ 1/r^s, at least 1, summing to `size`. */
function zipfCounts(size: number): number[] {
  const domains = Math.max(10, Math.floor(size / 20));
  const weights = Array.from({ length: domains }, (_, r) => 1 / (r + 1) ** ZIPF_S);
  const total = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.max(1, Math.floor((size * w) / total)));
  let left = size - counts.reduce((a, b) => a + b, 0);
  // Rounding: the surplus or shortfall goes to the head, largest first.
  for (let r = 0; left !== 0; r = (r + 1) % domains) {
    if (left > 0) {
      counts[r]! += 1;
      left -= 1;
    } else if (counts[r]! > 1) {
      counts[r]! -= 1;
      left += 1;
    }
  }
  return counts;
}

const domainName = (r: number) => `z${r}.bench.test`;

function zoneFor(domains: number): Zone {
  const zone: Zone = {};
  for (let r = 0; r < domains; r++) {
    zone[domainName(r)] = { MX: [{ preference: 10, exchange: `mx${r % HOSTS}.bench.test` }] };
  }
  for (let h = 0; h < HOSTS; h++) zone[`mx${h}.bench.test`] = { A: [hostIp(h)] };
  return zone;
}

/** The list, interleaved across domains (as a real export is), generated lazily: one line at a time. */
function* addressLines(counts: number[]): Generator<string> {
  const next = counts.map(() => 0);
  let remaining = counts.reduce((a, b) => a + b, 0);
  while (remaining > 0) {
    for (let r = 0; r < counts.length; r++) {
      if (next[r]! >= counts[r]!) continue;
      yield `u${next[r]}@${domainName(r)}\n`;
      next[r]! += 1;
      remaining -= 1;
    }
  }
}

/** The per-MX lower bound in seconds (see the header). */
function lowerBoundSeconds(counts: number[]): number {
  const rcpts = new Array<number>(HOSTS).fill(0);
  counts.forEach((n, r) => (rcpts[r % HOSTS]! += n + 1));
  const replies = rcpts.map((n) => n + SESSION_OVERHEAD * Math.ceil(n / MAX_RCPT_PER_SESSION));
  return (Math.max(...replies) * DELAY_MS) / MX_CAP / 1000;
}

function rssMiB(pid: number): number {
  try {
    const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Math.round(Number(kib) / 1024);
  } catch {
    return 0;
  }
}

/** Samples the peak RSS of `pids` until `done` settles. */
async function peakRss(pids: number[], done: Promise<unknown>): Promise<number[]> {
  const peaks = pids.map(rssMiB);
  let running = true;
  void done.finally(() => (running = false)).catch(() => {});
  while (running) {
    pids.forEach((pid, i) => (peaks[i] = Math.max(peaks[i]!, rssMiB(pid))));
    await sleep(200);
  }
  return peaks;
}

interface Deployment {
  base: string;
  key: string;
  service: ChildProcess;
  workers: ChildProcess[];
  prefix: string;
  stop(): Promise<void>;
}

const running = new Set<Deployment>();

/** The verification service and `workerCount` worker processes on a fresh database and queue prefix. */
async function deploy(
  name: string,
  workerCount: number,
  world: { dns: string; smtpPort: number },
): Promise<Deployment> {
  const prefix = `{agora-bench-list-${name}}`;
  const databaseUrl = await resetBenchState(DATABASE, prefix);
  const port = await freePort();
  const env = {
    ...benchEnv(databaseUrl, prefix),
    VERIFY_PORT: String(port),
    RATE_LIMIT_ENABLED: 'false',
    WORKER_METRICS_PORT: '0',
    VERIFY_DNS_SERVERS: world.dns,
    VERIFY_SMTP_PORT: String(world.smtpPort),
    VERIFY_ALLOW_PRIVATE_MX: 'true',
    VERIFY_HELO_NAME: 'bench.agora.test',
    VERIFY_MX_CONCURRENCY: String(MX_CAP),
    VERIFY_MX_PACING_MS: '0',
    // Production mode wants a real secret; the bench has no sessions or links to sign.
    APP_SECRET: 'bench-only-secret-bench-only-secret-0123456789',
  };
  const start = (script: string, scriptArgs: string[], nodeArgs: string[] = []) =>
    spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...scriptArgs], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const service = start(
    'bin/start.ts',
    ['--role', 'verify'],
    SERVICE_HEAP_MIB > 0 ? [`--max-old-space-size=${SERVICE_HEAP_MIB}`] : [],
  );
  const base = `http://127.0.0.1:${port}`;
  const workers: ChildProcess[] = [];
  const deployment: Deployment = {
    base,
    key: '',
    service,
    workers,
    prefix,
    async stop() {
      await Promise.all([service, ...workers].map(stopChild));
      await deleteKeys(prefix);
      running.delete(deployment);
    },
  };
  running.add(deployment);
  await waitForHealth(base, 120_000);
  await runScript('bin/admin.ts', ['users', 'create', 'bench'], env);
  deployment.key = (
    await runScript('bin/admin.ts', ['keys', 'create', '--user', 'bench', '--scopes', 'verify'], env)
  ).trim();
  for (let w = 0; w < workerCount; w++) workers.push(start('workers/main.ts', []));
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('verify-lists', { connection, prefix });
  try {
    await waitFor(`${workerCount} list workers`, 120_000, async () =>
      (await queue.getWorkersCount()) >= workerCount ? true : undefined,
    );
  } finally {
    await queue.close();
    connection.disconnect();
  }
  return deployment;
}

/**
 * Streams the list to POST /lists; resolves with the list id once the service answered 202. A 503 (the service's
 * Redis or PostgreSQL briefly away, as on a loaded machine) is retried after its Retry-After, as a client would, under
 * one Idempotency-Key so that a retry cannot create a second list; the retries count in the run's time.
 */
async function uploadList(d: Deployment, counts: number[]): Promise<string> {
  const idempotencyKey = `bench-${randomUUID()}`;
  for (let attempt = 1; ; attempt++) {
    const body = Readable.from(addressLines(counts), { objectMode: false });
    const res = await fetch(`${d.base}/lists?name=bench`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-api-key': d.key, 'idempotency-key': idempotencyKey },
      body: Readable.toWeb(body) as ReadableStream,
      duplex: 'half',
      signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
    } as RequestInit);
    const answer = (await res.json()) as { data?: { id: string }; message?: string };
    if (res.status === 503 && attempt < 5) {
      const seconds = Number(res.headers.get('retry-after')) || 2;
      console.error(`POST /lists 503 (${answer.message}); retrying in ${seconds} s`);
      await sleep(seconds * 1000);
      continue;
    }
    if (res.status !== 202 || !answer.data) throw new Error(`POST /lists ${res.status}: ${answer.message}`);
    return answer.data.id;
  }
}

interface ListView {
  status: string;
  processed: number;
  total: number;
  counts: Record<string, number>;
}

/** The list as the service shows it, or undefined while it answers 503 (polled again). */
async function listView(d: Deployment, id: string): Promise<ListView | undefined> {
  const res = await fetch(`${d.base}/lists/${id}`, {
    headers: { 'x-api-key': d.key },
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status === 503) return undefined;
  return ((await res.json()) as { data: ListView }).data;
}

async function untilEnded(d: Deployment, id: string): Promise<ListView> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const list = await listView(d, id);
    if (list && ['completed', 'failed', 'cancelled'].includes(list.status)) return list;
    if (Date.now() > deadline) throw new Error(`list ${id} not ended after ${RUN_TIMEOUT_MS} ms`);
    await sleep(250);
  }
}

const resetStats = (smtp: SlowSmtpWorld) => {
  for (const s of smtp.stats.values())
    Object.assign(s, { connections: 0, open: 0, maxOpen: 0, rcpts: 0, replies: 0 });
};

async function main(): Promise<void> {
  const largest = Math.max(SIZE, ...MEMORY_SIZES);
  const dns = await startDnsServer(zoneFor(zipfCounts(largest).length));
  const smtp = await startSlowSmtp(
    Array.from({ length: HOSTS }, (_, h) => hostIp(h)),
    { delayMs: DELAY_MS, accepts: (a) => /^u\d+@/.test(a) },
  );
  const world = { dns: dns.endpoint, smtpPort: smtp.port };
  const counts = zipfCounts(SIZE);
  const bound = lowerBoundSeconds(counts);
  const shape = `${counts.length} domains on ${HOSTS} MX hosts, largest ${counts[0]}, ${counts[9]} at rank 10, ${
    counts.filter((n) => n <= 2).length
  } with one or two`;
  log(
    `${SIZE} addresses, ${shape}; delay ${DELAY_MS} ms, cap ${MX_CAP}; lower bound ${bound.toFixed(1)} s; ${os.cpus().length} CPUs`,
  );

  const rows: string[] = [];
  for (const workerCount of WORKER_COUNTS) {
    const d = await deploy(`t${workerCount}`, workerCount, world);
    try {
      resetStats(smtp);
      const started = performance.now();
      const id = await uploadList(d, counts);
      const uploaded = (performance.now() - started) / 1000;
      const list = await untilEnded(d, id);
      const seconds = (performance.now() - started) / 1000;
      const connections = [...smtp.stats.values()].reduce((n, s) => n + s.connections, 0);
      const outcome = Object.entries(list.counts)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      log(
        `${workerCount} worker(s): ${list.status} in ${seconds.toFixed(1)} s (upload ${uploaded.toFixed(1)} s), ` +
          `${(seconds / bound).toFixed(2)}× the bound, ${(connections / SIZE).toFixed(3)} connections/address; ${outcome}`,
      );
      rows.push(
        `| ${workerCount} | ${seconds.toFixed(1)} | ${uploaded.toFixed(1)} | ${(SIZE / seconds).toFixed(0)} | ${(seconds / bound).toFixed(2)}× | ${connections} | ${(connections / SIZE).toFixed(3)} | ${list.status}: ${outcome} |`,
      );
    } finally {
      await d.stop();
    }
  }

  const memoryRows: string[] = [];
  for (const size of MEMORY_SIZES) {
    const d = await deploy(`m${size}`, 2, world);
    try {
      const sizeCounts = zipfCounts(size);
      const pids = [d.service.pid!, ...d.workers.map((w) => w.pid!)];
      const idle = pids.map(rssMiB);
      const started = performance.now();
      const upload = uploadList(d, sizeCounts);
      const duringUpload = await peakRss(pids, upload);
      const id = await upload;
      const uploadSeconds = (performance.now() - started) / 1000;
      const duringWork = await peakRss(pids, sleep(MEMORY_SECONDS * 1000));
      const list = await listView(d, id);
      await fetch(`${d.base}/lists/${id}`, { method: 'DELETE', headers: { 'x-api-key': d.key } });
      log(
        `memory, ${size} addresses: upload ${uploadSeconds.toFixed(1)} s; RSS MiB idle ${idle.join('/')}, ` +
          `upload peak ${duringUpload.join('/')}, then ${MEMORY_SECONDS} s of verification peak ${duringWork.join('/')} ` +
          `(service/workers); ${list?.processed ?? '?'} rows verified by then`,
      );
      memoryRows.push(
        `| ${size} | ${uploadSeconds.toFixed(1)} | ${idle[0]} | ${duringUpload[0]} | ${duringWork[0]} | ${idle
          .slice(1)
          .join(' / ')} | ${duringWork.slice(1).join(' / ')} | ${list?.processed ?? '?'} |`,
      );
    } finally {
      await d.stop();
    }
  }

  await smtp.close();
  await dns.close();
  const out = [
    `${SIZE} addresses (${shape}), delay ${DELAY_MS} ms, cap ${MX_CAP}, per-MX lower bound ${bound.toFixed(1)} s`,
    '| workers | wall s | of which upload s | addresses/s | ÷ lower bound | SMTP connections | connections/address | result |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
  if (memoryRows.length > 0)
    out.push(
      '',
      `RSS (MiB), 2 workers, peak over the upload and the next ${MEMORY_SECONDS} s of verification`,
      '| addresses | upload s | service idle | service, upload peak | service, verifying peak | workers idle | workers, peak | rows verified |',
      '|---|---|---|---|---|---|---|---|',
      ...memoryRows,
    );
  process.stdout.write(out.join('\n') + '\n');
}

main()
  .catch((err) => {
    log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => Promise.all([...running].map((d) => d.stop())));
