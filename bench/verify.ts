/**
 * Bulk verification throughput in a loopback mail world: 200 domains, each with its own MX host name and its own
 * SMTP listener (127.0.10.1–200, one shared port), every reply sent after --delay ms. 10,000 addresses (50 per
 * domain) go through POST /bulk-verify, 100 per request, --inflight requests at a time, with 1, 2 and 4 worker
 * processes (`tsx workers/main.ts --queues verify`). Rate limits off, VERIFY_ALLOW_PRIVATE_MX=true.
 *
 * Reported per run: addresses/s, SMTP connections opened, peak connections open at once on one MX host, the
 * ratio of the wall time to two lower bounds, and the CPU time each role used (against cores × wall time: whether
 * the machine, not the prober, was the limit). Every reply costs its connection `delay`, replies on one connection
 * are strictly sequential, a host serves at most `cap` connections at once, hosts work in parallel:
 * - ideal bound: the least any prober could need: per host, n addresses (+1 catch-all probe) in sessions of at
 *   most 20 RCPTs, each session 4 replies (greeting, EHLO, MAIL FROM, QUIT) plus its RCPTs:
 *   max over hosts of (4 × ⌈(n + 1) / 20⌉ + n + 1) × delay / cap.
 * - busy bound: the replies each host actually sent: max over hosts of replies × delay / cap (how well the
 *   connection slots were kept busy with the commands we chose to send).
 * - schedule bound: the same requests, sent `--inflight` at a time, through a model prober with no cost of its own
 *   (bench/lib/verify-schedule.ts): what answering each request only when its slowest host has answered costs by
 *   itself. Printed in the header; with every request in flight it is close to the ideal bound.
 *
 *   npx tsx bench/verify.ts [--workers 1,2,4] [--delay 50] [--inflight 100] [--concurrency N] [--layout shuffled]
 *                           [--warmup 3]
 *
 * By default every request is sent at once (--inflight 100: the whole 10,000 addresses, as the bounds assume) and
 * each worker runs the deployment's default number of jobs at once (VERIFY_WORKER_CONCURRENCY; --concurrency sets
 * another). `--concurrency 1000` lets one worker take every job at once; `--inflight 8` is a client that trickles its
 * list in.
 *
 * --layout shuffled: the addresses in random (seeded) order, so a request spans ~80 domains (packed into 4 jobs);
 * grouped: sorted by domain, so a request holds 2 domains of 50 addresses (two jobs, three sessions each).
 * Before the clock starts, --warmup rounds as big as the measured run (10,000 addresses on 200 other domains each,
 * on 200 other hosts, 127.0.11.x) go through the same path, and the bench waits until their connections have
 * closed: every process then runs JIT-compiled code, as a long-running deployment does, while the measured domains'
 * DNS and catch-all facts, ownerships and sessions are still cold. A smaller warm-up leaves V8 compiling the
 * per-connection code during the measured run, in every worker process: a cost that grows with the process count
 * and that a long-running deployment does not pay.
 * The verify service (`tsx bin/start.ts --role verify`) and the workers are child processes on a dedicated
 * database (agora_bench_verify, recreated) and a QUEUE_PREFIX per run. Needs PostgreSQL (BENCH_POSTGRES_URL,
 * default postgres://postgres@127.0.0.1:5432/postgres) and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379).
 */
import os from 'node:os';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../shared/config.js';
import { startDnsServer, type Zone } from '../test/support/dns-server.js';
import { startSlowSmtp } from '../test/verify-service/slow-smtp.js';
import { parseBenchArgs } from './lib/args.js';
import { cpuSecondsByRole, cpuSnapshot, processTree } from './lib/cpu.js';
import { benchDatabaseUrl, recreateDatabase } from './lib/postgres.js';
import { BenchChildren, benchEnv, freePort, runScript, waitFor } from './lib/processes.js';
import { deleteKeys, REDIS_URL } from './lib/redis.js';
import { scheduleBound } from './lib/verify-schedule.js';

const args = parseBenchArgs(
  { delay: [50, 0, 1000], inflight: [100, 1, 100], concurrency: [0, 0, 1000], warmup: [3, 0, 10] },
  { workers: '1,2,4', layout: 'shuffled' },
);
const WORKER_COUNTS = args.workers.split(',').map((n) => Math.min(Math.max(Number(n), 1), 8));
const { delay: DELAY_MS, inflight: INFLIGHT, warmup: WARMUP_ROUNDS } = args;
// 0: the deployment's default VERIFY_WORKER_CONCURRENCY.
const CONCURRENCY = args.concurrency || loadConfig({}).verify.workerConcurrency;
const LAYOUT = args.layout === 'grouped' ? 'grouped' : 'shuffled';

const DOMAINS = 200;
const PER_DOMAIN = 50;
const BATCH = 100;
const MX_CAP = 2;
const MAX_RCPT_PER_SESSION = 20;
const SESSION_OVERHEAD = 4; // greeting, EHLO, MAIL FROM, QUIT
const RUN_TIMEOUT_MS = 10 * 60_000;

const DATABASE = 'agora_bench_verify';
const databaseUrl = benchDatabaseUrl(DATABASE);

const log = (line: string) => process.stderr.write(`${line}\n`);
// Every host has PER_DOMAIN addresses and one catch-all probe: see the header for the formula.
const IDEAL_S =
  ((SESSION_OVERHEAD * Math.ceil((PER_DOMAIN + 1) / MAX_RCPT_PER_SESSION) + PER_DOMAIN + 1) * DELAY_MS) /
  MX_CAP /
  1000;
const hostIp = (i: number) => `127.0.10.${i + 1}`;
// Warm-up rounds on other domains and hosts before the clock starts, each as big as the measured run, so that every
// process runs JIT-compiled code (as a long-running deployment does) without warming the measured domains' caches
// or sessions. Each round has domains of its own (cold DNS and catch-all facts) on the same warm-up hosts.
const warmHostIp = (i: number) => `127.0.11.${i + 1}`;
// Longer than the verifier's session linger (500 ms): the warm-up's connections are closed before the clock starts.
const WARM_SETTLE_MS = 1500;
const running = new Set<BenchChildren>();

/** CPU time during the timed part, per role; "bench" is this process: the load, the mail world and DNS. */
const CPU_ROLES = ['service', 'workers', 'bench', 'redis', 'postgres'] as const;
// Only this bench's own processes count: its children (service, workers), the Redis server on BENCH_REDIS_URL's port
// and the PostgreSQL backends of its database, so that another bench or server on the machine is not mixed in.
const REDIS_PORT = new URL(REDIS_URL).port || '6379';
const ROLE_PATTERNS: [role: string, cmdline: RegExp, child: boolean][] = [
  ['service', /bin\/start\.ts/, true],
  ['workers', /workers\/main\.ts/, true],
  ['redis', new RegExp(`^redis-server \\S*:${REDIS_PORT}(\\s|$)`), false],
  ['postgres', new RegExp(`(^|/)postgres[: ].* ${DATABASE} `), false],
];
const roleOfIn =
  (children: Set<number>) =>
  (cmdline: string, pid: number): string | undefined =>
    pid === process.pid
      ? 'bench'
      : ROLE_PATTERNS.find(
          ([, pattern, child]) => (!child || children.has(pid)) && pattern.test(cmdline),
        )?.[0];

/** Resolves once every worker process has registered on the verify queue, so their boot is not measured. */
async function waitForWorkers(prefix: string, count: number): Promise<void> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('verify', { connection, prefix });
  try {
    await waitFor(`${count} verify workers`, 300_000, async () =>
      (await queue.getWorkersCount()) >= count ? true : undefined,
    );
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/** Deterministic shuffle (mulberry32), so every run and every machine gets the same batches. */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed;
  const random = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * `count` domains `<domain><i>.bench.test`, each with its own MX host `<mx><i>.bench.test` at `ipOf(i)`, and the
 * mailboxes u0…u<perDomain − 1> on each: the zone, the hosts' addresses, and the mailboxes domain by domain.
 */
function benchDomains(
  domain: string,
  mx: string,
  count: number,
  perDomain: number,
  ipOf: (i: number) => string,
) {
  const zone: Zone = {};
  const hosts: string[] = [];
  const addresses: string[] = [];
  for (let i = 0; i < count; i++) {
    zone[`${domain}${i}.bench.test`] = { MX: [{ preference: 10, exchange: `${mx}${i}.bench.test` }] };
    zone[`${mx}${i}.bench.test`] = { A: [ipOf(i)] };
    hosts.push(ipOf(i));
    for (let u = 0; u < perDomain; u++) addresses.push(`u${u}@${domain}${i}.bench.test`);
  }
  return { zone, hosts, addresses };
}

const inBatches = (list: string[]): string[][] =>
  Array.from({ length: Math.ceil(list.length / BATCH) }, (_, b) => list.slice(b * BATCH, (b + 1) * BATCH));

/** Sends the batches through POST /bulk-verify, `inflight` requests at a time, counting the results' status/reason. */
async function postBatches(
  base: string,
  key: string,
  batches: string[][],
  inflight: number,
  statuses: Map<string, number>,
): Promise<void> {
  let next = 0;
  const deadline = AbortSignal.timeout(RUN_TIMEOUT_MS);
  const lane = async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      const res = await fetch(`${base}/bulk-verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ emails: batch }),
        signal: deadline,
      });
      const body = (await res.json()) as { data?: { status: string; reason: string }[]; message?: string };
      if (!res.ok || !body.data) throw new Error(`bulk-verify ${res.status}: ${body.message}`);
      for (const { status, reason } of body.data) {
        const seen = `${status}/${reason}`;
        statuses.set(seen, (statuses.get(seen) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
}

async function main(): Promise<void> {
  const measuredWorld = benchDomains('d', 'mx', DOMAINS, PER_DOMAIN, hostIp);
  const warmWorlds = Array.from({ length: WARMUP_ROUNDS }, (_, r) =>
    benchDomains(`w${r}-`, 'wmx', DOMAINS, PER_DOMAIN, warmHostIp),
  );
  const dns = await startDnsServer(Object.assign({}, measuredWorld.zone, ...warmWorlds.map((w) => w.zone)));
  const hosts = measuredWorld.hosts;
  // Mailboxes u<n> exist; the random local part of the catch-all probe (letters and digits) is refused.
  const smtp = await startSlowSmtp([...hosts, ...(warmWorlds[0]?.hosts ?? [])], {
    delayMs: DELAY_MS,
    accepts: (a) => /^u\d+@/.test(a),
  });
  const measured = () => hosts.map((h) => smtp.stats.get(h)!);

  const addresses = LAYOUT === 'grouped' ? measuredWorld.addresses : shuffled(measuredWorld.addresses, 42);
  const batches = inBatches(addresses);
  const scheduleS = scheduleBound(
    batches.map((batch) => batch.map((address) => address.slice(address.indexOf('@') + 1))),
    {
      delayMs: DELAY_MS,
      cap: MX_CAP,
      maxRcpt: MAX_RCPT_PER_SESSION,
      overhead: SESSION_OVERHEAD,
      inflight: INFLIGHT,
    },
  );
  const warmRounds = warmWorlds.map((w, r) => inBatches(shuffled(w.addresses, 7 + r)));

  await recreateDatabase(DATABASE);
  const port = await freePort();
  const baseEnv = {
    VERIFY_PORT: String(port),
    RATE_LIMIT_ENABLED: 'false',
    WORKER_METRICS_PORT: '0',
    VERIFY_DNS_SERVERS: dns.endpoint,
    VERIFY_SMTP_PORT: String(smtp.port),
    VERIFY_ALLOW_PRIVATE_MX: 'true',
    VERIFY_HELO_NAME: 'bench.agora.test',
    VERIFY_MX_CONCURRENCY: String(MX_CAP),
    // Pacing is a politeness floor of its own (sessions × pacing per host); the bound below is about the cap.
    VERIFY_MX_PACING_MS: '0',
    VERIFY_WORKER_CONCURRENCY: String(CONCURRENCY),
  };
  log(
    `${addresses.length} addresses, ${DOMAINS} domains/MX hosts, delay ${DELAY_MS} ms, cap ${MX_CAP}, ` +
      `${INFLIGHT} requests in flight, worker concurrency ${CONCURRENCY}, layout ${LAYOUT}, ${os.cpus().length} CPUs`,
  );

  const rows: string[] = [];
  let key = '';
  for (const workerCount of WORKER_COUNTS) {
    const prefix = `{agora-bench-verify-${workerCount}}`;
    await deleteKeys(prefix);
    const env = { ...benchEnv(databaseUrl, prefix), ...baseEnv };
    const children = new BenchChildren();
    running.add(children);
    const base = `http://127.0.0.1:${port}`;
    await children.startHealthy('bin/start.ts', ['--role', 'verify'], env, base);
    if (!key) {
      await runScript('bin/admin.ts', ['users', 'create', 'bench'], env);
      key = (
        await runScript('bin/admin.ts', ['keys', 'create', '--user', 'bench', '--scopes', 'verify'], env)
      ).trim();
    }
    for (let w = 0; w < workerCount; w++) children.start('workers/main.ts', ['--queues', 'verify'], env);
    await waitForWorkers(prefix, workerCount);

    for (const round of warmRounds) await postBatches(base, key, round, INFLIGHT, new Map());
    if (warmRounds.length > 0) await new Promise((resolve) => setTimeout(resolve, WARM_SETTLE_MS));
    for (const s of smtp.stats.values())
      Object.assign(s, { connections: 0, open: 0, maxOpen: 0, rcpts: 0, replies: 0 });

    const statuses = new Map<string, number>();
    const cpuBefore = cpuSnapshot();
    const started = performance.now();
    await postBatches(base, key, batches, INFLIGHT, statuses);
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSecondsByRole(cpuBefore, cpuSnapshot(), roleOfIn(processTree(process.pid)));
    const cpuCell = CPU_ROLES.map((role) => (cpu.get(role) ?? 0).toFixed(1)).join(' / ');

    const stats = measured();
    const connections = stats.reduce((n, s) => n + s.connections, 0);
    const peak = Math.max(...stats.map((s) => s.maxOpen));
    const busyS = Math.max(...stats.map((s) => (s.replies * DELAY_MS) / MX_CAP)) / 1000;
    const rate = addresses.length / seconds;
    const outcome = [...statuses].map(([k, v]) => `${k} ${v}`).join(', ');
    log(
      `${workerCount} worker(s): ${seconds.toFixed(1)} s, ${rate.toFixed(0)} addresses/s, ${connections} connections (${(connections / addresses.length).toFixed(3)}/address), peak ${peak}/MX, ` +
        `ideal bound ${IDEAL_S.toFixed(2)} s (${(seconds / IDEAL_S).toFixed(2)}×), busy bound ${busyS.toFixed(2)} s (${(seconds / busyS).toFixed(2)}×); ` +
        `CPU s ${CPU_ROLES.join(' / ')}: ${cpuCell} of ${(seconds * os.cpus().length).toFixed(1)}; ${outcome}`,
    );
    rows.push(
      `| ${workerCount} | ${seconds.toFixed(1)} | ${rate.toFixed(0)} | ${connections} (${(connections / addresses.length).toFixed(3)}/address) | ${peak} | ${(seconds / IDEAL_S).toFixed(2)}× | ${(seconds / scheduleS).toFixed(2)}× | ${busyS.toFixed(2)} | ${(seconds / busyS).toFixed(2)}× | ${cpuCell} | ${outcome} |`,
    );

    await children.stopAll();
    running.delete(children);
    await deleteKeys(prefix);
  }

  await smtp.close();
  await dns.close();
  process.stdout.write(
    [
      `layout ${LAYOUT}, delay ${DELAY_MS} ms, cap ${MX_CAP}, ${INFLIGHT} in flight, worker concurrency ${CONCURRENCY}, ideal bound ${IDEAL_S.toFixed(2)} s, ` +
        `schedule bound ${scheduleS.toFixed(2)} s (${(scheduleS / IDEAL_S).toFixed(2)}× the ideal)`,
      `| workers | wall s | addresses/s | SMTP connections | peak per MX | ÷ ideal bound | ÷ schedule bound | busy bound s | ÷ busy bound | CPU s (${CPU_ROLES.join(' / ')}) | results |`,
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n') + '\n',
  );
}

main()
  .catch((err) => {
    log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => Promise.all([...running].map((children) => children.stopAll())));
