import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { freePort } from '../support/ports.js';
import { REDIS_URL } from '../support/postgres.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { deleteKeys } from '../support/runtime.js';
import { startReplica } from './postgres-replica.js';
import { addWriter, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

/**
 * Read replicas with a real streaming replica: a private primary (initdb) and a replica of it (pg_basebackup -R)
 * on ports of their own, and a Q&A process with DATABASE_READ_URLS. Reads are counted on each server by its own
 * statistics (scans of the questions table), so "served by the replica" is what the replica says.
 */

interface Answer {
  status: number | 'no answer';
  body: unknown;
}

async function ask(url: string, init: RequestInit = {}): Promise<Answer> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    return { status: res.status, body: text && JSON.parse(text) };
  } catch {
    return { status: 'no answer', body: null };
  }
}

const until = async (what: string, condition: () => Promise<boolean>, timeoutMs = 90_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
};

// Past the few hundred ms between a write and the reads that follow it, however loaded the machine: the replica
// must still be in use when the test reads from it while its replay is paused.
const MAX_LAG_MS = 15_000;

describe('read replicas', { timeout: 300_000 }, () => {
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let onPrimary: Database;
  let onReplica: Database;
  let qa: RunningProcess;
  let base: string;
  let key: string;
  let questionId: number;
  let replicaName: string;
  const prefix = `{agora-replicas-${process.pid}}`;

  /** Scans of the questions table as the server counts them (statistics reach the view within ~10 s). */
  const questionScans = async (database: Database) => {
    const [row] = await database.query<{ scans: number }>(
      sql`SELECT (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::int AS scans
          FROM pg_stat_user_tables WHERE relname = 'questions'`,
    );
    return row!.scans;
  };
  const replicaState = async () => {
    const ready = await ask(`${base}/ready`);
    return (ready.body as { dependencies?: Record<string, string> } | null)?.dependencies?.[replicaName];
  };
  const readQuestion = (id: number, headers: Record<string, string> = {}) =>
    ask(`${base}/api/questions/${id}`, { headers });

  beforeAll(async () => {
    primary = await startPrivatePostgres(await freePort());
    const admin = await openDatabase({ databaseUrl: primary.url(), dataDir: '/nonexistent' });
    await admin.query(sql.raw('CREATE DATABASE agora'));
    await admin.close();
    replica = await startReplica(primary, await freePort());
    replicaName = `replica 127.0.0.1:${replica.port}/agora`;

    const qaPort = await freePort();
    base = `http://127.0.0.1:${qaPort}`;
    qa = startProcess('bin/start.ts', ['--role', 'qa'], {
      DATABASE_URL: primary.url('agora'),
      DATABASE_READ_URLS: replica.url('agora'),
      DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      QA_PORT: String(qaPort),
      DEMO_DATA: 'false',
      RATE_LIMIT_ENABLED: 'false',
    });
    await qa.waitFor(/"msg":"ready"/, 120_000);

    onPrimary = await openDatabase({ databaseUrl: primary.url('agora'), dataDir: '/nonexistent' });
    onReplica = await openDatabase({ databaseUrl: replica.url('agora'), dataDir: '/nonexistent' });
    ({ key, questionId } = await addWriter(onPrimary, {
      title: 'Which yeast for a cold cellar?',
      slug: 'cold-cellar',
      content: 'My cellar stays at 12°C all year.',
    }));
    await until('the replica to be in use', async () => (await replicaState()) === 'ok');
  }, 300_000);

  afterAll(async () => {
    await qa?.stop('SIGTERM');
    await onPrimary?.close();
    await onReplica?.close();
    await replica?.destroy();
    await primary?.destroy();
    await deleteKeys(`${prefix}*`);
  });

  /**
   * Reads until the replica has counted `count` more scans of the questions table: only this test's reads scan it
   * there. (A read that finds the replica briefly left out goes to the primary; the next ones come back.)
   */
  const replicaServes = async (count: number) => {
    const before = await questionScans(onReplica);
    await until(`the replica to count ${count} reads`, async () => {
      expect((await readQuestion(questionId)).status).toBe(200);
      return (await questionScans(onReplica)) >= before + count;
    });
  };

  it('serves public reads from the replica, as the replica counts them', async () => {
    await replicaServes(20);
    expect(await replicaState()).toBe('ok');
    // Prepared statements (search, the question detail) reach the replica's driver client too.
    const search = await ask(`${base}/api/search?q=yeast`);
    expect(search.status).toBe(200);
    expect((search.body as { data: { results: unknown[] } }).data.results).toEqual(expect.any(Array));
  });

  it('lets a key read its own write at once, and sends reads to the primary while the replica lags too far', async () => {
    await onReplica.query(sql`SELECT pg_wal_replay_pause()`);
    try {
      const posted = await ask(`${base}/api/questions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          title: 'Is a cold crash worth it for a stout?',
          content: 'I never cold crash my stouts and wonder whether they would clear faster if I did.',
          tags: ['brewing'],
        }),
      });
      expect(posted.status).toBe(201);
      const id = (posted.body as { data: { id: number } }).data.id;

      // The writer reads its question at once (the primary); an anonymous reader still reads the replica, whose
      // replay is paused before the write.
      const own = await readQuestion(id, { authorization: `Bearer ${key}` });
      expect(own.status).toBe(200);
      expect((own.body as { data: { title: string } }).data.title).toBe(
        'Is a cold crash worth it for a stout?',
      );
      await until(
        'an anonymous read of the paused replica',
        async () => (await readQuestion(id)).status === 404,
      );

      // Past the max lag the replica is left out (/ready says so, and stays 200) and every read is the primary's.
      await until('the lagging replica to be left out', async () => (await replicaState()) === 'unavailable');
      const ready = await ask(`${base}/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'degraded', dependencies: { postgres: 'ok', redis: 'ok' } });
      expect((await readQuestion(id)).status).toBe(200);
    } finally {
      await onReplica.query(sql`SELECT pg_wal_replay_resume()`);
    }

    // Caught up again: in use again.
    await until('the replica to be in use again', async () => (await replicaState()) === 'ok');
    await replicaServes(10);
  });

  it('answers every read while the replica is killed under load, from the primary, and uses it again once back', async () => {
    const reads: Answer[] = [];
    let stopLoad = false;
    let n = 0;
    // Twenty reads a second: one question by id (not cached) and list pages the read cache has not seen.
    const load = (async () => {
      const pending: Promise<unknown>[] = [];
      while (!stopLoad) {
        const i = n++;
        const url = i % 2 === 0 ? `${base}/api/questions/${questionId}` : `${base}/api/questions?page=${i}`;
        pending.push(ask(url).then((answer) => reads.push(answer)));
        await sleep(50);
      }
      await Promise.all(pending);
    })();

    await until('reads under way', async () => reads.length >= 20);
    const primaryBefore = await questionScans(onPrimary);
    await replica.kill();
    await until('the killed replica to be left out', async () => (await replicaState()) === 'unavailable');
    const during = reads.length;
    // Half of the reads are the question by id, which scans the questions table; a list page past the last one
    // may be answered from the counters alone. Sixty reads give the primary well over the 20 scans looked for.
    await until('reads on the primary meanwhile', async () => reads.length >= during + 60);

    await replica.start();
    await until('the replica to be in use again', async () => (await replicaState()) === 'ok');
    stopLoad = true;
    await load;

    const statuses = [...new Set(reads.map((r) => r.status))];
    expect(statuses).toEqual([200]);
    // The primary served the reads while the replica was away (its scans grew), and the replica serves them again.
    await until(
      'the primary to count the reads',
      async () => (await questionScans(onPrimary)) >= primaryBefore + 20,
    );
    await replicaServes(10);
    expect(qa.output()).not.toContain('"level":50');
    expect(qa.output()).toContain('read replica left out');
    const metrics = (await fetch(`${base}/metrics`).then((res) => res.text())).split('\n');
    expect(metrics).toContainEqual(
      expect.stringMatching(/^agora_database_reads_total\{target="replica",reason="public"\} [1-9]/),
    );
    expect(metrics).toContainEqual(
      expect.stringMatching(
        /^agora_database_reads_total\{target="primary",reason="(no_replica|replica_down)"\} [1-9]/,
      ),
    );
  });
});
