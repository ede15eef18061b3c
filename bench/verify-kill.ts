/**
 * What a SIGKILLed verify worker costs a bulk request (issue 15), at the deployment's default timers: one
 * POST /bulk-verify of --domains × --per-domain addresses (20 × 5 = 100; four exist per domain, `nobody` does not),
 * each domain on its own MX host (127.0.12.x, one shared port) answering every SMTP command after --delay ms
 * (300), served by two worker processes. The same request is made twice, on fresh domains each time (cold DNS and
 * catch-all facts): once undisturbed, once with the worker running more of its jobs SIGKILLed --kill-after ms
 * (1500) after it was sent. Reported: both wall times, their difference, and every result status (a correct run
 * has no `unknown`).
 *
 *   npx tsx bench/verify-kill.ts [--delay 300] [--domains 20] [--per-domain 5] [--kill-after 1500]
 *
 * The verify service (`tsx bin/start.ts --role verify`) and the workers (`tsx workers/main.ts --queues verify`,
 * logging at debug so the bench sees which one runs jobs) are child processes on a dedicated database
 * (agora_bench_verify_kill, recreated) and their own QUEUE_PREFIX. Needs PostgreSQL (BENCH_POSTGRES_URL) and Redis
 * (BENCH_REDIS_URL), as bench/verify.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { startDnsServer, type Zone } from '../test/support/dns-server.js';
import { startSlowSmtp } from '../test/verify-service/slow-smtp.js';
import { parseBenchArgs } from './lib/args.js';
import { recreateDatabase } from './lib/postgres.js';
import { BenchChildren, benchEnv, freePort, ROOT, runScript, stopChild } from './lib/processes.js';
import { deleteKeys } from './lib/redis.js';

const args = parseBenchArgs({
  delay: [300, 0, 2000],
  domains: [20, 1, 100],
  'per-domain': [5, 1, 20],
  'kill-after': [1500, 0, 30_000],
});
const LOCALS = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jon'];
const DATABASE = 'agora_bench_verify_kill';
const PREFIX = '{agora-bench-verify-kill}';
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The addresses of one round: `round` picks its own domains and MX hosts, so no round warms another's caches. */
function roundEmails(round: number): string[] {
  const emails: string[] = [];
  for (let d = 0; d < args.domains; d++)
    for (let k = 0; k < args['per-domain']; k++) {
      const local = k === args['per-domain'] - 1 ? 'nobody' : `${LOCALS[k % LOCALS.length]}${k}`;
      emails.push(`${local}@r${round}d${d}.bench.test`);
    }
  return emails;
}
const hostOf = (round: number, d: number) => `127.0.${12 + round}.${d + 1}`;

/** A worker child whose stdout is read, to count the jobs it started. */
interface WorkerChild {
  child: ChildProcess;
  jobs: number;
}

function startWorker(env: Record<string, string>): Promise<WorkerChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts', '--queues', 'verify'], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const worker: WorkerChild = { child, jobs: 0 };
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it started`)));
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (line.includes('verifying domains')) worker.jobs++;
        if (line.includes('workers started')) resolve(worker);
      }
    });
  });
}

async function bulkVerify(base: string, key: string, emails: string[]) {
  const res = await fetch(`${base}/bulk-verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ emails }),
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok) throw new Error(`POST /bulk-verify answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { data: { email: string; status: string }[] };
  const statuses = new Map<string, number>();
  let wrong = 0;
  for (const r of body.data) {
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status !== (r.email.startsWith('nobody') ? 'invalid' : 'valid')) wrong++;
  }
  return { statuses: [...statuses].map(([s, n]) => `${s} ${n}`).join(', '), wrong };
}

async function main(): Promise<void> {
  const zone: Zone = {};
  const hosts: string[] = [];
  for (const round of [0, 1])
    for (let d = 0; d < args.domains; d++) {
      const domain = `r${round}d${d}.bench.test`;
      zone[domain] = { MX: [{ preference: 10, exchange: `mx.${domain}` }] };
      zone[`mx.${domain}`] = { A: [hostOf(round, d)] };
      hosts.push(hostOf(round, d));
    }
  const dns = await startDnsServer(zone);
  const smtp = await startSlowSmtp(hosts, {
    delayMs: args.delay,
    accepts: (a) => !/^(nobody|[a-z0-9]{18})@/.test(a),
  });
  const children = new BenchChildren();
  const workers: WorkerChild[] = [];
  try {
    const databaseUrl = await recreateDatabase(DATABASE);
    await deleteKeys(PREFIX);
    const port = await freePort();
    // Only the loopback world is configured: every lock, stalled check and dispatch timer is the default.
    const env = {
      ...benchEnv(databaseUrl, PREFIX),
      VERIFY_PORT: String(port),
      RATE_LIMIT_ENABLED: 'false',
      WORKER_METRICS_PORT: '0',
      VERIFY_DNS_SERVERS: dns.endpoint,
      VERIFY_SMTP_PORT: String(smtp.port),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'bench.agora.test',
    };
    const base = `http://127.0.0.1:${port}`;
    await children.startHealthy('bin/start.ts', ['--role', 'verify'], env, base);
    await runScript('bin/admin.ts', ['users', 'create', 'bench'], env);
    const key = (
      await runScript('bin/admin.ts', ['keys', 'create', '--user', 'bench', '--scopes', 'verify'], env)
    ).trim();
    workers.push(...(await Promise.all([startWorker(env), startWorker(env)])));
    const total = args.domains * args['per-domain'];
    log(
      `${total} addresses over ${args.domains} domains, SMTP replies after ${args.delay} ms, 2 workers, ` +
        `kill after ${args['kill-after']} ms`,
    );

    let started = performance.now();
    const plain = await bulkVerify(base, key, roundEmails(0));
    const plainS = (performance.now() - started) / 1000;
    log(`no kill:   ${plainS.toFixed(1)} s; ${plain.statuses}; ${plain.wrong} wrong`);

    for (const w of workers) w.jobs = 0;
    started = performance.now();
    const killed = bulkVerify(base, key, roundEmails(1));
    await new Promise((resolve) => setTimeout(resolve, args['kill-after']));
    const victim = workers[1]!.jobs > workers[0]!.jobs ? workers[1]! : workers[0]!;
    const lost = victim.jobs;
    victim.child.kill('SIGKILL');
    const withKill = await killed;
    const killS = (performance.now() - started) / 1000;
    log(
      `with kill: ${killS.toFixed(1)} s (${lost} jobs lost); ${withKill.statuses}; ${withKill.wrong} wrong`,
    );
    process.stdout.write(
      `| ${total} / ${args.domains} | ${args.delay} ms | ${plainS.toFixed(1)} s | ${killS.toFixed(1)} s | ` +
        `+${(killS - plainS).toFixed(1)} s | ${lost} | ${withKill.statuses} |\n`,
    );
  } finally {
    await Promise.all(workers.map((w) => stopChild(w.child)));
    await children.stopAll();
    await deleteKeys(PREFIX);
    await smtp.close();
    await dns.close();
  }
}

main().catch((err) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
