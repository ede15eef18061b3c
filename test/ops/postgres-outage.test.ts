import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { viewCounter } from '../../shared/qa/views.js';
import { createQueues, type Queues } from '../../shared/queues/producer.js';
import { connectRedis, type Redis } from '../../shared/redis.js';
import { REDIS_URL } from '../support/postgres.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { deleteKeys } from '../support/runtime.js';
import { addWriter, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

/**
 * PostgreSQL stopped (fast shutdown) under load, on a server of the test's own: the Q&A service answers every
 * request meanwhile with 200 (from its caches) or 503 + Retry-After and the error body, never a 500 and never a
 * hang; writes are either accepted and kept whole or refused; a worker puts back the jobs that met the outage
 * without spending their attempts, and everything recovers by itself once PostgreSQL is back.
 */

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Answer {
  status: number | 'no answer';
  retryAfter: string | null;
  body: unknown;
  url: string;
  /** From the request to the end of the answer (or to giving up): shown when the statuses are wrong. */
  ms: number;
}

/** A request that may not hang: no answer within the bound is recorded as such (and fails the test). */
async function ask(url: string, init: RequestInit = {}): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(8000) });
    const text = await res.text();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: text && JSON.parse(text),
      url,
      ms: Date.now() - started,
    };
  } catch {
    return { status: 'no answer', retryAfter: null, body: null, url, ms: Date.now() - started };
  }
}

/** How long PostgreSQL stays stopped at least (issue 18 item 4). */
const OUTAGE_MS = 10_000;

// Each phase takes seconds alone; with the whole suite beside it on a loaded 2-core machine, phases have taken over a
// minute. The bound only says when to give up.
const until = async (
  what: string,
  condition: () => Promise<boolean>,
  timeoutMs = 150_000,
  detail: () => string = () => '',
) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} ${detail()}`.trim());
    await sleep(250);
  }
};

describe('PostgreSQL stopped under load', { timeout: 600_000 }, () => {
  let pg: PrivatePostgres;
  let database: Database;
  let redis: Redis;
  let queues: Queues;
  let qa: RunningProcess;
  let worker: RunningProcess;
  let base: string;
  let key: string;
  let questionId: number;
  const prefix = `{agora-outage-${process.pid}}`;

  beforeAll(async () => {
    pg = await startPrivatePostgres(await freePort());
    const admin = await openDatabase({ databaseUrl: pg.url(), dataDir: '/nonexistent' });
    await admin.query(sql.raw('CREATE DATABASE agora'));
    await admin.close();

    const qaPort = await freePort();
    base = `http://127.0.0.1:${qaPort}`;
    const env = {
      DATABASE_URL: pg.url('agora'),
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      QA_PORT: String(qaPort),
      WORKER_METRICS_PORT: '0',
      DEMO_DATA: 'false',
      RATE_LIMIT_ENABLED: 'false',
    };
    qa = startProcess('bin/start.ts', ['--role', 'qa'], env);
    await qa.waitFor(/"msg":"ready"/, 120_000);

    database = await openDatabase({ databaseUrl: pg.url('agora'), dataDir: '/nonexistent' });
    ({ key, questionId } = await addWriter(database, {
      title: 'A question whose views are counted',
      slug: 'views-q',
      content: 'Counted while PostgreSQL is away.',
    }));

    worker = startProcess('workers/main.ts', ['--queues', 'views'], env);
    await worker.waitFor(/"msg":"ready"/, 120_000);
    redis = connectRedis(REDIS_URL, 'producer');
    queues = createQueues(redis, prefix);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([qa?.stop('SIGTERM'), worker?.stop('SIGTERM')]);
    await queues?.close();
    redis?.disconnect();
    await database?.close();
    await pg?.destroy();
    await deleteKeys(`${prefix}*`);
  });

  it('answers 200 or 503 + Retry-After meanwhile, loses no accepted write, and recovers by itself', async () => {
    const reads: Answer[] = [];
    const writes: { title: string; answer: Answer }[] = [];
    let stopLoad = false;
    let n = 0;
    // Twenty reads a second (pages the read cache has not seen, so they reach PostgreSQL) and two writes.
    // At most 20 requests in flight: on a machine loaded by the rest of the suite, an open loop would pile up
    // requests faster than they are answered, and every answer would miss the 8 s bound for a reason that is not
    // the outage.
    let inFlight = 0;
    const counted = <T>(p: Promise<T>): Promise<T> => {
      inFlight++;
      return p.finally(() => inFlight--);
    };
    const load = (async () => {
      const pending: Promise<unknown>[] = [];
      while (!stopLoad) {
        if (inFlight >= 20) {
          await sleep(50);
          continue;
        }
        const i = n++;
        pending.push(counted(ask(`${base}/api/questions?page=${i + 1}`)).then((a) => reads.push(a)));
        if (i % 10 === 0) {
          const title = `Keeping a fermentation cool during an outage, number ${i}`;
          const answer = counted(
            ask(`${base}/api/questions`, {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                title,
                content: 'My ale ferments at 24°C in summer and the yeast throws off esters I do not want.',
                tags: ['brewing', 'yeast'],
              }),
            }),
          );
          pending.push(answer.then((a) => writes.push({ title, answer: a })));
        }
        await sleep(50);
      }
      await Promise.all(pending);
    })();

    let ready: Answer | undefined;
    try {
      // Phases end on what they are for, not after fixed times: the outage lasts until reads and writes have met it
      // and the worker has put a flush back.
      await until(
        'a read answered before the outage',
        async () => reads.some((r) => r.status === 200),
        undefined,
        () =>
          `read statuses ${[...new Set(reads.map((r) => r.status))].join('/')} over ${reads.length} reads; ` +
          `service output: ${qa.output().slice(-1500)}`,
      );
      await pg.stop();
      const stoppedAt = Date.now();
      // Views counted on the hot path (Redis) while PostgreSQL is away: the worker's flushes meet the outage.
      const views = viewCounter(redis, prefix);
      for (let i = 0; i < 25; i++) await views.record(questionId);
      ready = await ask(`${base}/ready`);
      const met = {
        'a refused read': () => reads.some((r) => r.status === 503),
        'a refused write': () => writes.some((w) => w.answer.status === 503),
        'a flush put back': () => worker.output().includes('database unavailable; job put back'),
      };
      const unmet = () => Object.keys(met).filter((what) => !met[what as keyof typeof met]());
      // The timeout's message names what never came (with the statuses seen), not only that something did not.
      await until(
        'the outage to be met',
        async () => unmet().length === 0,
        undefined,
        () =>
          `${unmet().join(', ')}; read statuses ${[...new Set(reads.map((r) => r.status))].join('/')}, ` +
          `write statuses ${[...new Set(writes.map((w) => w.answer.status))].join('/')}; ` +
          `worker output: ${worker.output().slice(-1500)}`,
      );
      // Issue 18 item 4: the server stays away for 10 s at least, under the load, whatever the conditions took.
      await sleep(Math.max(0, stoppedAt + OUTAGE_MS - Date.now()));
      await pg.start();
      const answeredBeforeRestart = reads.length;
      const sinceRestart = () => reads.slice(answeredBeforeRestart);
      await until(
        'a read answered after the restart',
        async () => sinceRestart().some((r) => r.status === 200),
        undefined,
        () => {
          const statuses = sinceRestart().map((r) => `${r.status} in ${r.ms} ms`);
          return `(${statuses.length} answers since: ${statuses.slice(-10).join(', ')}; qa output: ${qa.output().slice(-1500)})`;
        },
      );
    } finally {
      stopLoad = true;
      await load;
    }

    expect(ready!.status).toBe(503);
    expect(ready!.body).toMatchObject({ error: true, code: 503, dependencies: { postgres: 'unavailable' } });

    const statuses = new Set(reads.map((r) => r.status));
    const slowest = [...reads, ...writes.map((w) => w.answer)]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map(({ status, url, ms }) => ({ status, url, ms }));
    expect([...statuses].sort(), `slowest answers: ${JSON.stringify(slowest)}`).toEqual([200, 503]);
    for (const refused of reads.filter((r) => r.status === 503)) {
      expect(refused.retryAfter).toBe('2');
      expect(refused.body).toEqual({
        error: true,
        message: 'Service temporarily unavailable; try again shortly',
        code: 503,
      });
    }
    for (const { answer } of writes) expect([201, 503]).toContain(answer.status);
    expect(writes.some((w) => w.answer.status === 503)).toBe(true);

    // Recovered by itself: reads and writes succeed again, without a restart.
    await until(
      'reads to succeed again',
      async () => (await ask(`${base}/api/questions?page=1`)).status === 200,
    );
    expect((await ask(`${base}/ready`)).status).toBe(200);

    // Every accepted write is there, whole (its two tags); a question is never there without its tags.
    const stored = await database.query<{ title: string; tags: number }>(
      sql`SELECT q.title, count(qt.tag_id)::int AS tags FROM questions q
          LEFT JOIN question_tags qt ON qt.question_id = q.id
          WHERE q.title LIKE 'Keeping a fermentation cool during an outage%' GROUP BY q.title`,
    );
    const storedTitles = new Set(stored.map((s) => s.title));
    for (const { title } of writes.filter((w) => w.answer.status === 201))
      expect(storedTitles).toContain(title);
    for (const s of stored) expect(s.tags).toBe(2);

    // The worker kept running, put its flushes back instead of failing them, and every view arrived.
    await until('the views to be flushed', async () => {
      const [row] = await database.query<{ views: number }>(
        sql`SELECT views FROM questions WHERE id = ${questionId}`,
      );
      return row!.views === 25;
    });
    expect(worker.output()).toContain('database unavailable; job put back');
    expect(await queues.queue('views').getFailedCount()).toBe(0);
    expect(worker.child.exitCode).toBeNull();
    expect(qa.output()).not.toContain('"level":50');
  });
});
