/**
 * The roles on separate hosts (issue 18), on one machine: network namespaces with their own addresses stand for
 * the hosts (needs root). A bridge in the root namespace carries a private PostgreSQL and Redis (the machine's own
 * servers are never touched), the DNS server and the mail servers; four namespaces run the verification service
 * (.11), the Q&A service (.12) and two verify workers (.21, .22), all real processes at the default timers.
 *
 *   sudo npx tsx bench/multi-host.ts [--delay 300] [--domains 20] [--list 3000] [--list-domains 60]
 *                                    [--list-hosts 30] [--observe 20] [--logs DIR]
 *
 * (a) A /bulk-verify of --domains × 5 addresses (ann, ben, cat, dan exist, nobody does; one MX host per domain)
 *     and a list of --list addresses (--list-domains domains on --list-hosts MX hosts; u<n> exist, x<n> do not)
 *     run at once, undisturbed: the mail servers count the RCPTs each worker host sent, the workers' /metrics
 *     their completed jobs.
 * (b) The same on fresh domains, and once a worker host has probed both, its link is cut (`ip link set <veth>
 *     down`: the processes live on, unreachable). The bulk answer must be complete with the real results (no
 *     unknown) and the list completed with every row exactly once. Then the link comes back and for --observe
 *     seconds the cut-off worker may finish what it held: no result may change or appear twice.
 * (c) A question written and read back through the Q&A service.
 *
 * Every SMTP reply comes --delay ms late, so work is in flight at the cut. Prints a report; exits 1 if an
 * expectation failed. Namespaces, links, servers, processes and the temporary directory are removed on every exit.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDnsServer } from '../test/support/dns-server.js';
import { startSlowSmtp } from '../test/verify-service/slow-smtp.js';
import * as api from './lib/agora-http.js';
import { parseBenchArgs } from './lib/args.js';
import * as world from './lib/multi-host-world.js';
import { NamespacedRoles } from './lib/namespaced-roles.js';
import { createVirtualNetwork, type VirtualHost } from './lib/netns.js';
import { startPrivatePostgres, startPrivateRedis } from './lib/private-servers.js';
import { runScript, waitFor } from './lib/processes.js';

const args = parseBenchArgs(
  {
    delay: [300, 0, 2000],
    domains: [20, 1, 29],
    list: [3000, 100, 20_000],
    'list-domains': [60, 1, 1000],
    'list-hosts': [30, 1, 60],
    observe: [20, 0, 600],
  },
  { logs: '' },
);
const log = (line: string) => process.stderr.write(`${line}\n`);
const failures: string[] = [];
const expect = (ok: boolean, what: string) => {
  log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

const shape = {
  domains: args.domains,
  list: args.list,
  listDomains: args['list-domains'],
  listHosts: args['list-hosts'],
};
const bulkEmails = (round: string) => world.bulkEmails(shape, round);
const listEmails = (round: string) => world.listEmails(shape, round);
const wrongResults = (results: api.Result[]) => results.filter((r) => r.status !== world.expected(r.email));

const net = createVirtualNetwork();
const tmp = mkdtempSync(path.join(os.tmpdir(), `agora-multi-host-${net.suffix}-`));
// PostgreSQL runs as its own user in a directory under this one.
chmodSync(tmp, 0o711);
// The roles' logs go to the temporary directory (removed at exit) unless --logs names a directory to keep them in.
const logDir = args.logs || tmp;
const roles = new NamespacedRoles(logDir);
const stoppers: (() => void)[] = [];
let cleaned = false;
/** Synchronous, so that it also runs from the exit and signal handlers. */
function cleanUp(): void {
  if (cleaned) return;
  cleaned = true;
  roles.killAll();
  for (const stop of stoppers.reverse()) stop();
  net.destroy();
  rmSync(tmp, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });

async function main(): Promise<void> {
  const bulkHost = (d: number) => net.address(101 + d);
  const listHost = (h: number) => net.address(131 + h);
  const mailHosts = [
    ...Array.from({ length: args.domains }, (_, d) => bulkHost(d)),
    ...Array.from({ length: args['list-hosts'] }, (_, h) => listHost(h)),
  ];
  net.addAddresses(mailHosts);
  const zone = world.mailZone(shape, bulkHost, listHost);

  const pg = await startPrivatePostgres(path.join(tmp, 'pg'), net.gateway, `${net.address(0)}/24`);
  stoppers.push(pg.stop);
  const redis = await startPrivateRedis(path.join(tmp, 'redis'), net.gateway);
  stoppers.push(redis.stop);
  const dns = await startDnsServer(zone, net.gateway);
  // RCPTs per address and prober: which host probed what, and what was probed twice.
  const rcpts = new Map<string, Map<string, number>>();
  const smtp = await startSlowSmtp(mailHosts, {
    delayMs: args.delay,
    accepts: (a) => world.expected(a) === 'valid' && !/^[a-z0-9]{18}@/.test(a),
    onRcpt: (address, _host, client) => {
      const by = rcpts.get(client) ?? new Map<string, number>();
      by.set(address, (by.get(address) ?? 0) + 1);
      rcpts.set(client, by);
    },
  });
  const rcptsOf = (host: VirtualHost, match: (a: string) => boolean) =>
    [...(rcpts.get(host.address)?.entries() ?? [])].filter(([a]) => match(a)).reduce((n, [, c]) => n + c, 0);

  const verifyHost = net.addHost('verify', 11);
  const qaHost = net.addHost('qa', 12);
  const workerHosts = [net.addHost('worker1', 21), net.addHost('worker2', 22)];
  // Only the world is configured (where DNS and mail are, the hosts' addresses): every timer is the default.
  const env = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    NODE_ENV: 'production',
    APP_SECRET: `multi-host-bench-${net.suffix}-0123456789abcdef0123456789`,
    LOG_LEVEL: 'info',
    RATE_LIMIT_ENABLED: 'false',
    VERIFY_PORT: '3001',
    QA_PORT: '3000',
    WORKER_METRICS_PORT: '9464',
    VERIFY_DNS_SERVERS: dns.endpoint,
    VERIFY_SMTP_PORT: String(smtp.port),
    VERIFY_ALLOW_PRIVATE_MX: 'true',
    VERIFY_HELO_NAME: 'multi-host.agora.test',
  };
  const verifyBase = `http://${verifyHost.address}:3001`;
  const qaBase = `http://${qaHost.address}:3000`;
  const metricsOf = (h: VirtualHost) => `http://${h.address}:9464`;
  log(
    `network 10.x: ${net.gateway} (PostgreSQL, Redis, DNS, ${mailHosts.length} mail hosts); role logs in ${logDir}`,
  );

  let started = performance.now();
  // The verification service migrates the empty database first; the others then find it migrated.
  await roles.ready(
    roles.start(verifyHost, 'bin/start.ts', ['--role', 'verify'], env),
    `${verifyBase}/health`,
    180_000,
  );
  const qa = roles.start(qaHost, 'bin/start.ts', ['--role', 'qa'], env);
  const workers = workerHosts.map((h) => roles.start(h, 'bin/workers.ts', [], env));
  await Promise.all([
    roles.ready(qa, `${qaBase}/health`, 180_000),
    ...workers.map((w) => roles.ready(w, `${metricsOf(w.host)}/health`, 180_000)),
  ]);
  log(`four roles up in ${seconds(started)}`);
  await runScript('bin/admin.ts', ['users', 'create', 'bench'], env);
  // admin: the question of (c) may create its tag on the empty database.
  const key = (
    await runScript(
      'bin/admin.ts',
      ['keys', 'create', '--user', 'bench', '--scopes', 'verify,qa:write,admin'],
      env,
    )
  ).trim();

  /** Checks a list's rows: each exactly once, each with its real result, the counters adding up. */
  const checkList = async (round: string, id: string, what: string) => {
    const view = await api.listView(verifyBase, key, id);
    const rows = await api.listResults(verifyBase, key, id);
    const numbers = new Set(rows.map((r) => r.row));
    const counted = Object.values(view.counts).reduce((a, b) => a + b, 0);
    expect(view.status === 'completed', `${what}: list ${view.status}`);
    expect(
      rows.length === args.list &&
        numbers.size === args.list &&
        view.processed === args.list &&
        counted === args.list,
      `${what}: ${rows.length} result rows, ${numbers.size} distinct, processed ${view.processed}, counters sum ${counted} (of ${args.list})`,
    );
    const emails = listEmails(round);
    const wrong = rows.filter((r) => r.email !== emails[r.row - 1] || r.status !== world.expected(r.email));
    expect(wrong.length === 0, `${what}: ${wrong.length} rows with another address or result than expected`);
    return view;
  };
  const perHost = async (round: string, before: Map<string, number>[]) => {
    for (const [w, worker] of workers.entries()) {
      const after = await api.completedJobs(metricsOf(worker.host)).catch(() => undefined);
      log(
        `  ${worker.host.name} (${worker.host.address}): RCPTs bulk ${rcptsOf(worker.host, (a) => a.includes(`@b${round}`))}, ` +
          `list ${rcptsOf(worker.host, (a) => a.includes(`@l${round}`))}; jobs completed: ` +
          (after ? api.jobsBetween(before[w]!, after) : 'unknown (its /metrics is out of reach)'),
      );
    }
  };
  const jobsNow = () => Promise.all(workers.map((w) => api.completedJobs(metricsOf(w.host))));

  // (a) undisturbed.
  log(`\n(a) bulk of ${args.domains * 5} and list of ${args.list}, SMTP replies after ${args.delay} ms`);
  let before = await jobsNow();
  started = performance.now();
  const listA = await api.uploadList(verifyBase, key, 'round-a', listEmails('a'));
  const bulkA = await api.bulkVerify(verifyBase, key, bulkEmails('a'));
  log(`  bulk answered in ${seconds(started)}`);
  expect(
    bulkA.length === args.domains * 5 && wrongResults(bulkA).length === 0,
    `bulk: ${bulkA.length} results, ${wrongResults(bulkA).length} wrong`,
  );
  await api.listEnded(verifyBase, key, listA, 600_000);
  log(`  list completed in ${seconds(started)}`);
  await checkList('a', listA, 'list (a)');
  await perHost('a', before);
  for (const w of workers)
    expect(rcptsOf(w.host, (a) => /@[bl]a/.test(a)) > 0, `${w.host.name} probed some of round (a)`);

  // (b) a worker host cut off mid-work.
  log(`\n(b) the same on fresh domains; a worker host is cut off once it probes both`);
  before = await jobsNow();
  started = performance.now();
  const listB = await api.uploadList(verifyBase, key, 'round-b', listEmails('b'));
  let bulkDone = false;
  const bulkB = api.bulkVerify(verifyBase, key, bulkEmails('b')).finally(() => (bulkDone = true));
  bulkB.catch(() => {});
  const victim = await waitFor(
    'a worker probing the bulk and the list',
    120_000,
    async () =>
      workers.find(
        (w) => rcptsOf(w.host, (a) => a.includes('@bb')) > 0 && rcptsOf(w.host, (a) => a.includes('@lb')) > 0,
      ),
    100,
  );
  net.cut(victim.host);
  const cutAt = performance.now();
  const victimRole = roles.roles.find((r) => r.host === victim.host)!;
  let victimExitedAt: number | undefined;
  victimRole.child.once('exit', () => (victimExitedAt = performance.now()));
  const heldBulk = rcptsOf(victim.host, (a) => a.includes('@bb'));
  const heldList = rcptsOf(victim.host, (a) => a.includes('@lb'));
  const processedAtCut = (await api.listView(verifyBase, key, listB)).processed;
  log(
    `  ${victim.host.name} cut off ${seconds(started)} in (bulk answered: ${bulkDone}); it had sent ${heldBulk} bulk and ` +
      `${heldList} list RCPTs; list at ${processedAtCut}/${args.list}`,
  );
  expect(!bulkDone, 'the bulk request was still in flight at the cut');
  const resultsB = await bulkB;
  log(`  bulk answered ${seconds(cutAt)} after the cut`);
  const unknown = resultsB.filter((r) => r.status === 'unknown');
  expect(
    resultsB.length === args.domains * 5 && wrongResults(resultsB).length === 0,
    `bulk: ${resultsB.length} results, ${wrongResults(resultsB).length} wrong (${unknown.length} unknown)`,
  );
  await api.listEnded(verifyBase, key, listB, 600_000);
  log(`  list completed ${seconds(cutAt)} after the cut`);
  const viewB = await checkList('b', listB, 'list (b)');
  const survivor = workers.find((w) => w !== victim)!;
  const victimBefore = before[workers.indexOf(victim)]!;
  await perHost('b', before);

  net.restore(victim.host);
  const restoredAt = performance.now();
  const exited = () => victimRole.child.exitCode !== null || victimRole.child.signalCode !== null;
  // Back on the network, or gone: a process may also have ended itself while cut off (an error it did not survive).
  await waitFor(`${victim.host.name} reachable again`, 60_000, async () =>
    exited() || (await fetch(`${metricsOf(victim.host)}/health`, { signal: AbortSignal.timeout(2000) })).ok
      ? true
      : undefined,
  );
  const rcptsAtRestore = rcptsOf(victim.host, () => true);
  log(`  link restored; watching ${args.observe} s for late writes by ${victim.host.name}`);
  await sleep(args.observe * 1000);
  const viewAfter = await checkList('b', listB, 'list (b) after the link came back');
  expect(
    JSON.stringify(viewAfter.counts) === JSON.stringify(viewB.counts) &&
      viewAfter.processed === viewB.processed,
    `no counter moved after the link came back (${JSON.stringify(viewAfter.counts)})`,
  );
  const victimLog = readFileSync(victimRole.log, 'utf8').split('\n');
  const lockLines = victimLog.filter((l) => /lock/i.test(l));
  const fatal = victimLog.find((l) => l.includes('shutting down after an error'));
  const victimJobs = exited()
    ? undefined
    : await api.completedJobs(metricsOf(victim.host)).catch(() => undefined);
  log(
    `  ${victim.host.name} ${seconds(restoredAt)} after the link came back: ` +
      (exited()
        ? `exited ${victimExitedAt! < restoredAt ? 'while cut off' : 'after the link came back'}, ` +
          `${((victimExitedAt! - cutAt) / 1000).toFixed(1)} s after the cut ` +
          `(${victimRole.child.exitCode ?? victimRole.child.signalCode})` +
          (fatal ? `: ${(JSON.parse(fatal) as { err?: { message?: string } }).err?.message}` : '')
        : `alive; jobs completed since round (b) began: ${victimJobs ? api.jobsBetween(victimBefore, victimJobs) : '?'}`) +
      `; ${rcptsOf(victim.host, () => true) - rcptsAtRestore} RCPTs since; ` +
      `${lockLines.length} log lines about locks${lockLines[0] ? `, e.g. ${lockLines[0].slice(0, 300)}` : ''}`,
  );
  const reprobed = [...(rcpts.get(victim.host.address)?.keys() ?? [])].filter(
    (a) => /@[bl]b/.test(a) && (rcpts.get(survivor.host.address)?.has(a) ?? false),
  ).length;
  log(`  addresses of round (b) probed by both worker hosts: ${reprobed}`);

  // (c) Q&A over the network.
  log(`\n(c) Q&A from its own host`);
  const title = `Does a cut-off worker host lose the work it held ${net.suffix}?`;
  const write = await fetch(`${qaBase}/api/questions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      title,
      content: 'Asked across namespaces, answered from PostgreSQL on the bridge.',
      tags: ['networking'],
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const written = (await write.json()) as { data?: { id: number }; message?: string };
  expect(
    write.status === 201 && written.data?.id !== undefined,
    `POST /api/questions answered ${write.status}${written.message ? `: ${written.message}` : ''}`,
  );
  const read = await fetch(`${qaBase}/api/questions/${written.data?.id}`, {
    signal: AbortSignal.timeout(30_000),
  });
  const question = (await read.json()) as { data?: { title?: string } };
  expect(
    read.status === 200 && question.data?.title === title,
    `GET /api/questions/${written.data?.id} read it back`,
  );

  await roles.stopAll();
  await smtp.close();
  await dns.close();
}

main()
  .catch((err: unknown) => {
    failures.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
    log(`bench failed: ${failures.at(-1)}`);
  })
  .finally(() => {
    log(failures.length === 0 ? '\nevery expectation held' : `\n${failures.length} expectation(s) failed`);
    cleanUp();
    process.exit(failures.length === 0 ? 0 : 1);
  });
