import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { questions } from '../../shared/db/schema/index.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { freePort } from '../support/ports.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { startRedisCluster, type RedisClusterFixture } from '../support/redis-cluster.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addUser } from '../qa-read/fixtures.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { startSlowSmtp, type SlowSmtpWorld } from '../verify-service/slow-smtp.js';

// The whole system on a Redis Cluster of three local masters (REDIS_CLUSTER_NODES): `npm start`'s process (both
// services and every worker) and a second verify worker process. Verification (single, bulk, a list), the views
// counters, the rate limits, keys spread over the shards, and a master restarted under load.

const HOSTS = ['127.0.9.41', '127.0.9.42', '127.0.9.43', '127.0.9.44', '127.0.9.45', '127.0.9.46'];
const DOMAINS = HOSTS.map((_, k) => `c${k}.test`);
const PER_DOMAIN = 5;
/** Known mailboxes start with `user`; anything else is refused (550 5.1.1). */
const bulkEmails = (tag: string) =>
  DOMAINS.flatMap((domain) =>
    Array.from({ length: PER_DOMAIN }, (_, i) =>
      i === 0 ? `nobody-${tag}@${domain}` : `user${i}-${tag}@${domain}`,
    ),
  );
const expectedStatus = (email: string) => (email.startsWith('user') ? 'valid' : 'invalid');

/** The anonymous plan's hourly budget at its default (RATE_LIMIT_ANONYMOUS_HOURLY). */
const ANONYMOUS_HOURLY = 60;
const WAIT_MS = 120_000;

let cluster: RedisClusterFixture;
let dns: DnsServer;
let smtp: SlowSmtpWorld;
let runtime: TestRuntime;
let all: RunningProcess;
let worker: RunningProcess;
let qaBase: string;
let verifyBase: string;
let verifyKey: string;
/** Anonymous Q&A requests sent so far: they count against one budget (per client network). */
let anonymousRequests = 0;

const qa = async (path: string) => {
  anonymousRequests++;
  return fetch(`${qaBase}${path}`, { signal: AbortSignal.timeout(WAIT_MS) });
};

const verify = (path: string, body?: unknown) =>
  fetch(`${verifyBase}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'x-api-key': verifyKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT_MS),
  });

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The deployment's keys on one node (SCAN of that node alone). */
async function keysOn(port: number): Promise<string[]> {
  const node = cluster.node(port);
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(
      cursor,
      'MATCH',
      `${tagOf(runtime.config.queuePrefix)}*`,
      'COUNT',
      1000,
    );
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}
const tagOf = (queuePrefix: string) => `{${queuePrefix.replace(/[{}]/g, '')}:`;

async function waitForList(id: string) {
  return until(`list ${id} to end`, async () => {
    const res = await verify(`/lists/${id}`);
    const list = ((await res.json()) as { data: { status: string } }).data;
    return ['completed', 'failed', 'cancelled'].includes(list.status) ? list : undefined;
  });
}

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  smtp = await startSlowSmtp(HOSTS, { delayMs: 5, accepts: (a) => a.startsWith('user') });
  dns = await startDnsServer(Object.assign({}, ...DOMAINS.map((domain, k) => mailDomain(domain, HOSTS[k]!))));
  const [qaPort, verifyPort] = [await freePort(), await freePort()];
  qaBase = `http://127.0.0.1:${qaPort}/api`;
  verifyBase = `http://127.0.0.1:${verifyPort}`;
  runtime = await createTestRuntime(
    worldEnv(dns.endpoint, smtp.port, {
      REDIS_CLUSTER_NODES: cluster.nodes.join(','),
      RATE_LIMIT_ENABLED: 'true',
      // The verify budget is not under test here (the Q&A anonymous plan is), and the load below spends many points.
      VERIFY_RATE_LIMIT_HOURLY: '1000000',
      VERIFY_RATE_LIMIT_DAILY: '1000000',
      HOST: '127.0.0.1',
      QA_PORT: String(qaPort),
      VERIFY_PORT: String(verifyPort),
      WORKER_LOCK_MS: '5000',
    }),
  );
  ({ verify: verifyKey } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  // `npm start`: both services and every worker; then a second process for the verification queues.
  all = startProcess('bin/start.ts', [], runtime.env);
  worker = startProcess('bin/workers.ts', ['--queues', 'verify,verify-lists'], runtime.env);
  await Promise.all([all.waitFor(/"msg":"ready"/, WAIT_MS), worker.waitFor(/workers started/, WAIT_MS)]);
}, 240_000);

afterAll(async () => {
  await Promise.all([all?.stop('SIGKILL'), worker?.stop('SIGKILL')]);
  await runtime?.close();
  await cluster?.stop();
  await smtp?.close();
  await dns?.close();
});

describe('Agora on a Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  it('verifies one address and a bulk request across the worker processes', async () => {
    const one = await verify('/verify', { email: 'user1-one@c0.test' });
    expect(one.status).toBe(200);
    expect(((await one.json()) as { data: { status: string } }).data.status).toBe('valid');

    const emails = bulkEmails('bulk');
    const bulk = await verify('/bulk-verify', { emails });
    expect(bulk.status).toBe(200);
    const body = (await bulk.json()) as { count: number; data: { email: string; status: string }[] };
    expect(body.count).toBe(emails.length);
    expect(body.data.map((r) => [r.email, r.status])).toEqual(emails.map((e) => [e, expectedStatus(e)]));
  }, 180_000);

  it('runs a list to its end', async () => {
    const emails = bulkEmails('list');
    const created = await verify('/lists', { emails });
    expect(created.status).toBe(202);
    const { id } = ((await created.json()) as { data: { id: string } }).data;
    const list = await waitForList(id);
    const invalid = emails.filter((e) => expectedStatus(e) === 'invalid').length;
    expect(list).toMatchObject({
      status: 'completed',
      total: emails.length,
      processed: emails.length,
      counts: { valid: emails.length - invalid, invalid, risky: 0, unknown: 0 },
    });
  }, 180_000);

  it('counts question views in Redis and flushes them to PostgreSQL', async () => {
    const author = await addUser(runtime.database.db);
    const { id } = await addQuestion(runtime.database.db, { authorId: author.id });
    for (let i = 0; i < 3; i++) expect((await qa(`/questions/${id}`)).status).toBe(200);
    const views = await until('the views flush', async () => {
      const [row] = await runtime.database.db
        .select({ views: questions.views })
        .from(questions)
        .where(eq(questions.id, id));
      return row!.views >= 3 ? row!.views : undefined;
    });
    expect(views).toBe(3);
  }, 180_000);

  it('refuses anonymous requests past the plan budget with a 429, counted in the cluster', async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    while (!refused && anonymousRequests <= ANONYMOUS_HOURLY) {
      const res = await qa('/questions');
      statuses.push(res.status);
      if (res.status === 429) refused = res;
    }
    expect(anonymousRequests).toBe(ANONYMOUS_HOURLY + 1);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('x-ratelimit-limit')).toBe(String(ANONYMOUS_HOURLY));
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    // The counters live in the cluster (not in a process's memory fallback).
    const counters = (await Promise.all(cluster.ports.map(keysOn)))
      .flat()
      .filter((k) => k.includes(':ratelimit:qa:'));
    expect(counters.length).toBeGreaterThan(0);
  }, 120_000);

  it('spreads the keys over the shards, each group under its own hash tag', async () => {
    const perNode = await Promise.all(cluster.ports.map(keysOn));
    expect(perNode.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
    const tags = new Set(perNode.flat().map((k) => k.slice(0, k.indexOf('}') + 1)));
    const deployment = runtime.config.queuePrefix.replace(/[{}]/g, '');
    for (const group of ['verify', 'verify-hosts', 'verify-lists', 'verification', 'views', 'ratelimit'])
      expect(tags).toContain(`{${deployment}:${group}}`);
    // Every key sits on the node that owns its slot: the client followed the slot map, nothing was MOVED.
    for (const [k, keys] of perNode.entries())
      for (const key of keys.slice(0, 50)) expect(await cluster.ownerOf(key)).toBe(cluster.ports[k]);
  }, 120_000);

  it('keeps working while a master restarts under load: only 503s, and the work finishes', async () => {
    const deployment = runtime.config.queuePrefix.replace(/[{}]/g, '');
    const victim = await cluster.ownerOf(`{${deployment}:verify}`);
    const created = await verify('/lists', { emails: bulkEmails('restart-list') });
    expect(created.status).toBe(202);
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    const statuses: number[] = [];
    let load = true;
    let round = 0;
    const loop = async () => {
      while (load) {
        const tag = `load${round++}`;
        const res = await verify('/bulk-verify', { emails: bulkEmails(tag).slice(0, 12) }).catch(() => null);
        statuses.push(res?.status ?? 0);
        await res?.arrayBuffer().catch(() => {});
      }
    };
    const loops = [loop(), loop()];
    await until('load before the restart', async () => (statuses.length >= 2 ? true : undefined));
    await cluster.restart(victim);
    const afterRestart = statuses.length;
    await until('load after the restart', async () =>
      statuses.slice(afterRestart).filter((s) => s === 200).length >= 2 ? true : undefined,
    );
    load = false;
    await Promise.all(loops);

    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    const list = await waitForList(id);
    expect(list).toMatchObject({ status: 'completed', processed: DOMAINS.length * PER_DOMAIN });
    const emails = bulkEmails('after');
    const bulk = await verify('/bulk-verify', { emails });
    expect(bulk.status).toBe(200);
    const body = (await bulk.json()) as { data: { email: string; status: string; reason: string }[] };
    // A status other than the expected one is shown with its reason.
    const seen = body.data.map((r) =>
      r.status === expectedStatus(r.email) ? r.status : `${r.status}: ${r.reason}`,
    );
    expect(seen).toEqual(emails.map(expectedStatus));
  }, 240_000);
});
