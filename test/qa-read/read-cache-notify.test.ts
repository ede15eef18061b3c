import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { migrateDatabase } from '../../shared/db/migrate.js';
import { categories } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addCategory, addQuestion, addUser } from './fixtures.js';
import { CACHE_ENV, changesDelivered, writeSilently } from './read-cache-support.js';

/**
 * How changes made elsewhere reach a process's read cache: PostgreSQL's NOTIFY on agora_changes (migration 0004),
 * and a re-LISTEN after a lost connection. vi.waitFor only waits for the notification to arrive; the TTL (10 min)
 * is far beyond it, so expiry cannot be what makes the new value appear.
 */
type App = Awaited<ReturnType<typeof buildQaApp>>;

const categoryNames = async (app: App) =>
  (await app.inject('/api/categories')).json().data.categories.map((c: { name: string }) => c.name);

describe('the read cache across processes', () => {
  let runtime: TestRuntime;
  let appA: App;
  let appB: App;
  let databaseB: Database;
  let question: { id: number };
  let auth: { authorization: string };

  beforeAll(async () => {
    runtime = await createTestRuntime(CACHE_ENV);
    appA = await buildQaApp(runtime);
    // A second process: its own connections, its own LISTEN, its own cache.
    databaseB = await openDatabase({ databaseUrl: runtime.env.DATABASE_URL, dataDir: '' });
    appB = await buildQaApp({ ...runtime, database: databaseB });
    const db = runtime.database.db;
    const author = await addUser(db, { username: 'notify_author' });
    await addUser(db, { username: 'notify_writer' });
    question = await addQuestion(db, { authorId: author.id, title: 'Bottle conditioning a saison' });
    const { key } = await createApiKey(db, {
      username: 'notify_writer',
      plan: 'authenticated',
      scopes: ['qa:write'],
    });
    auth = { authorization: `Bearer ${key}` };
  });
  afterAll(async () => {
    await appA.close();
    await appB.close();
    await databaseB.close();
    await runtime.close();
  });

  it("shows a write made through one process on the other's cached reads once the notification arrives", async () => {
    await changesDelivered(databaseB);
    const url = `/api/questions/${question.id}/answers`;
    for (const app of [appA, appB, appA, appB]) await app.inject(url);
    expect((await appB.inject(url)).headers['x-cache']).toBe('hit');

    const posted = await appA.inject({
      method: 'POST',
      url,
      headers: auth,
      payload: { content: 'Prime with 6 g of sugar per litre and keep the bottles at 20°C for two weeks.' },
    });
    expect(posted.statusCode).toBe(201);
    await vi.waitFor(
      async () => {
        const answers = (await appB.inject(url)).json().data.answers;
        expect(answers.map((a: { id: number }) => a.id)).toEqual([posted.json().data.id]);
      },
      { timeout: 10_000 },
    );
  });

  it('is emptied by agora_recount(), which bulk loaders run after writing with triggers off', async () => {
    const url = '/api/questions';
    await appB.inject(url);
    const before = (await appB.inject(url)).json().data.questions[0].answers_count;
    const [writer] = await runtime.database.query<{ id: number }>(
      sql`SELECT id FROM users WHERE username = 'notify_writer'`,
    );
    await writeSilently(
      runtime.database,
      sql`INSERT INTO answers (question_id, author_id, content) VALUES (${question.id}, ${writer!.id}, 'Loaded in bulk')`,
    );
    // Nothing notified and no counter moved yet.
    expect((await appB.inject(url)).json().data.questions[0].answers_count).toBe(before);

    await runtime.database.query(sql`SELECT agora_recount()`);
    await vi.waitFor(
      async () => {
        expect((await appB.inject(url)).json().data.questions[0].answers_count).toBe(before + 1);
      },
      { timeout: 10_000 },
    );
  });

  it('empties itself when its LISTEN connection is lost and made again (notifications may have been missed)', async () => {
    await changesDelivered(databaseB);
    await appB.inject('/api/categories');
    expect((await appB.inject('/api/categories')).headers['x-cache']).toBe('hit');
    await writeSilently(
      runtime.database,
      sql`INSERT INTO categories (name, slug) VALUES ('Missed while away', 'missed-while-away')`,
    );
    expect(await categoryNames(appB)).not.toContain('Missed while away');

    const terminated = await databaseB.query<{ pid: number }>(
      sql`SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen%'
            AND pg_terminate_backend(pid)`,
    );
    expect(terminated.length).toBeGreaterThan(0);
    // The re-LISTEN, not a notification (none was sent), empties the cache.
    await vi.waitFor(async () => expect(await categoryNames(appB)).toContain('Missed while away'), {
      timeout: 10_000,
    });

    // And notifications flow again afterwards.
    await addCategory(runtime.database.db, 'After the reconnection');
    await vi.waitFor(async () => expect(await categoryNames(appB)).toContain('After the reconnection'), {
      timeout: 10_000,
    });
  });
});

describe('QA_READ_CACHE_TTL_MS=0', () => {
  let runtime: TestRuntime;
  let app: App;

  beforeAll(async () => {
    runtime = await createTestRuntime({ ...CACHE_ENV, QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('turns the cache off: every read is computed', async () => {
    const first = await app.inject('/api/categories');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBeUndefined();
    await writeSilently(
      runtime.database,
      sql`INSERT INTO categories (name, slug) VALUES ('Uncached', 'uncached')`,
    );
    const second = await app.inject('/api/categories');
    expect(second.headers['x-cache']).toBeUndefined();
    expect(second.json().data.categories.map((c: { name: string }) => c.name)).toEqual(['Uncached']);
  });
});

describe('the read cache on the embedded PGlite', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-read-cache-'));
  let runtime: TestRuntime;
  let database: Database;
  let app: App;

  beforeAll(async () => {
    runtime = await createTestRuntime(CACHE_ENV);
    database = await openDatabase({ dataDir });
    await migrateDatabase(database);
    app = await buildQaApp({ ...runtime, database });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("learns of a write made behind the app's back from PGlite's NOTIFY", async () => {
    await app.inject('/api/categories');
    expect((await app.inject('/api/categories')).headers['x-cache']).toBe('hit');
    await database.db.insert(categories).values({ name: 'Embedded', slug: 'embedded' });
    await vi.waitFor(async () => expect(await categoryNames(app)).toEqual(['Embedded']), { timeout: 10_000 });
  });
});
