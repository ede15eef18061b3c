import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { questions, viewBatches } from '../../shared/db/schema/index.js';
import { viewFlusher, viewKeys } from '../../shared/qa/views.js';
import { startProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addUser } from './fixtures.js';

describe('question views: buffered in Redis, flushed to PostgreSQL exactly once', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let flusher: ReturnType<typeof viewFlusher>;
  let keys: ReturnType<typeof viewKeys>;
  let authorId: number;

  const newQuestion = async () => (await addQuestion(runtime.database.db, { authorId })).id;
  const viewsOf = async (id: number) => {
    const [row] = await runtime.database.db
      .select({ views: questions.views })
      .from(questions)
      .where(eq(questions.id, id));
    return row!.views;
  };
  const read = async (id: number, times: number) => {
    for (let i = 0; i < times; i++) expect((await app.inject(`/api/questions/${id}`)).statusCode).toBe(200);
  };

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    flusher = viewFlusher({
      db: runtime.database.db,
      redis: runtime.redis,
      prefix: runtime.config.queuePrefix,
    });
    keys = viewKeys(runtime.config.queuePrefix);
    authorId = (await addUser(runtime.database.db)).id;
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('counts each read in Redis, not in PostgreSQL, until a flush', async () => {
    const id = await newQuestion();
    await read(id, 3);
    expect(await runtime.redis.hget(keys.pending, String(id))).toBe('3');
    expect(await viewsOf(id)).toBe(0);
    // Reads by slug, with includes and answered by 304 count too; lists and 404s do not.
    const [{ slug }] = (await runtime.database.db
      .select({ slug: questions.slug })
      .from(questions)
      .where(eq(questions.id, id))) as [{ slug: string }];
    await app.inject(`/api/questions/${slug}?include=answers,comments`);
    const etag = (await app.inject(`/api/questions/${id}`)).headers.etag as string;
    expect(
      (await app.inject({ url: `/api/questions/${id}`, headers: { 'if-none-match': etag } })).statusCode,
    ).toBe(304);
    await app.inject('/api/questions');
    await app.inject(`/api/questions/${id}/answers`);
    expect(await runtime.redis.hget(keys.pending, String(id))).toBe('6');

    const result = await flusher.flush();
    expect(result.views).toBeGreaterThanOrEqual(6);
    expect(await viewsOf(id)).toBe(6);
    expect(await runtime.redis.exists(keys.pending)).toBe(0);
    expect(await flusher.pendingBatches()).toEqual([]);
    const shown = (await app.inject(`/api/questions/${id}`)).json();
    expect(shown.data.views).toBe(6);
    await flusher.flush();
  });

  it('a flush with nothing pending changes nothing', async () => {
    await flusher.flush();
    expect(await flusher.flush()).toEqual({ batches: 0, applied: 0, views: 0 });
  });

  it('keeps views that arrive while a batch is being flushed for the next batch', async () => {
    const id = await newQuestion();
    await read(id, 2);
    const batch = await flusher.claim();
    expect(batch).not.toBeNull();
    await read(id, 3); // after the claim: a new pending hash
    expect(await runtime.redis.hget(keys.pending, String(id))).toBe('3');
    await flusher.apply(batch!);
    await flusher.release(batch!);
    expect(await viewsOf(id)).toBe(2);
    await flusher.flush();
    expect(await viewsOf(id)).toBe(5);
  });

  it('a worker that died after claiming leaves its batch for the next flush, counted once', async () => {
    const id = await newQuestion();
    await read(id, 4);
    const batch = await flusher.claim(); // ... and the worker dies here
    expect(await flusher.pendingBatches()).toEqual([batch]);
    await read(id, 1);
    const result = await flusher.flush();
    expect(result.batches).toBe(2);
    expect(await viewsOf(id)).toBe(5);
    expect(await flusher.pendingBatches()).toEqual([]);
  });

  it('a worker that died after committing but before releasing does not count the batch twice', async () => {
    const id = await newQuestion();
    await read(id, 7);
    const batch = await flusher.claim();
    expect(await flusher.apply(batch!)).toEqual({ applied: true, views: 7 }); // ... and the worker dies here
    expect(await viewsOf(id)).toBe(7);
    const result = await flusher.flush();
    expect(result).toEqual({ batches: 1, applied: 0, views: 0 });
    expect(await viewsOf(id)).toBe(7);
    expect(await runtime.redis.exists(keys.batch(batch!))).toBe(0);
    const recorded = await runtime.database.db.select().from(viewBatches).where(eq(viewBatches.id, batch!));
    expect(recorded).toHaveLength(1);
  });

  it('a failed transaction leaves the batch in Redis, records nothing, and applies once when retried', async () => {
    const id = await newQuestion();
    const db = runtime.database.db;
    await read(id, 5);
    // Another session holds view_batches: the flush gives up at its lock timeout, a real PostgreSQL failure.
    const other = postgres(runtime.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      await other.begin(async (tx) => {
        await tx`LOCK TABLE view_batches IN ACCESS EXCLUSIVE MODE`;
        await expect(flusher.flush()).rejects.toThrow();
      });
    } finally {
      await other.end();
    }
    const [batch] = await flusher.pendingBatches();
    expect(batch).toBeDefined();
    expect(await runtime.redis.hget(keys.batch(batch!), String(id))).toBe('5');
    expect(await db.select().from(viewBatches).where(eq(viewBatches.id, batch!))).toEqual([]);
    expect(await viewsOf(id)).toBe(0);

    await flusher.flush(); // the job's retry
    expect(await viewsOf(id)).toBe(5);
    await flusher.flush();
    expect(await viewsOf(id)).toBe(5);
    expect(await flusher.pendingBatches()).toEqual([]);
  });

  it('saturates at the int4 maximum instead of failing the batch forever', async () => {
    const id = await newQuestion();
    await runtime.database.db.update(questions).set({ views: 2_147_483_646 }).where(eq(questions.id, id));
    await read(id, 5);
    await flusher.flush();
    expect(await viewsOf(id)).toBe(2_147_483_647);
    expect(await flusher.pendingBatches()).toEqual([]);
  });

  it('skips hash fields that are not question ids or positive counts', async () => {
    const id = await newQuestion();
    await read(id, 2);
    const batch = (await flusher.claim())!;
    await runtime.redis.hset(
      keys.batch(batch),
      'not-a-question',
      '5',
      '3',
      'x',
      '99999999999',
      '1',
      String(id + 1000),
      '-4',
    );
    await flusher.flush();
    expect(await viewsOf(id)).toBe(2);
    expect(await flusher.pendingBatches()).toEqual([]);
  });

  it('two flushers racing on the same batches count every view exactly once', async () => {
    const ids = [await newQuestion(), await newQuestion()];
    await read(ids[0]!, 3);
    await flusher.claim();
    await read(ids[1]!, 2);
    await read(ids[0]!, 1);
    const other = viewFlusher({
      db: runtime.database.db,
      redis: runtime.redis,
      prefix: runtime.config.queuePrefix,
    });
    await Promise.all([flusher.flush(), other.flush(), flusher.flush()]);
    expect(await viewsOf(ids[0]!)).toBe(4);
    expect(await viewsOf(ids[1]!)).toBe(2);
    expect(await flusher.pendingBatches()).toEqual([]);
  });

  it('a real worker process flushes on its 5 s schedule, leftovers of crashed flushes included', async () => {
    const fresh = await newQuestion();
    const leftover = await newQuestion();
    const applied = await newQuestion();
    // A batch claimed by a worker that died before applying it, and one that died after committing it.
    await read(leftover, 2);
    const crashedBefore = (await flusher.claim())!;
    await read(applied, 3);
    const crashedAfter = (await flusher.claim())!;
    await flusher.apply(crashedAfter);
    expect(await viewsOf(applied)).toBe(3);
    await read(fresh, 4);

    const worker = startProcess('workers/main.ts', ['--queues', 'views'], {
      ...runtime.env,
      LOG_LEVEL: 'info',
    });
    try {
      await worker.waitFor(/workers started/);
      await expect.poll(() => viewsOf(fresh), { timeout: 20_000, interval: 200 }).toBe(4);
      await expect.poll(() => flusher.pendingBatches(), { timeout: 20_000, interval: 200 }).toEqual([]);
      expect(await viewsOf(leftover)).toBe(2);
      expect(await viewsOf(applied)).toBe(3);
      expect(await runtime.redis.exists(keys.batch(crashedBefore), keys.batch(crashedAfter))).toBe(0);

      // And it keeps flushing: reads made while it runs arrive too.
      await read(fresh, 2);
      await expect.poll(() => viewsOf(fresh), { timeout: 20_000, interval: 200 }).toBe(6);
    } finally {
      await worker.stop();
    }
    const [{ n }] = (await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM view_batches`,
    )) as [{ n: number }];
    expect(n).toBeGreaterThan(0);
  }, 90_000);
});
