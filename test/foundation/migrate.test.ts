import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../shared/db/client.js';
import { pgErrorCode } from '../../shared/db/errors.js';
import { migrateDatabase } from '../../shared/db/migrate.js';
import { DATABASE_PREFIX, databaseUrl, withAdmin } from '../support/postgres.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime } from '../support/runtime.js';

describe('migrations', () => {
  const name = `${DATABASE_PREFIX}_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  afterAll(() => withAdmin((admin) => admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));

  it('applies once when several replicas start together on an empty database', async () => {
    await withAdmin((admin) => admin.unsafe(`CREATE DATABASE "${name}"`));
    const replicas = await Promise.all(
      [1, 2, 3, 4].map(() => openDatabase({ databaseUrl: databaseUrl(name), dataDir: '' })),
    );
    try {
      await Promise.all(replicas.map((replica) => migrateDatabase(replica)));
      const [applied] = await replicas[0]!.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`,
      );
      const journal = await import('../../shared/db/migrations/meta/_journal.json', {
        with: { type: 'json' },
      });
      expect(applied!.n).toBe(journal.default.entries.length);
      const [tables] = await replicas[0]!.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN ('questions', 'api_keys', 'poll_votes', 'digest_sends')`,
      );
      expect(tables!.n).toBe(4);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it('is what npm run migrate does, and running it again changes nothing', async () => {
    const env = { DATABASE_URL: databaseUrl(name) };
    const first = await runProcess('bin/migrate.ts', [], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('migrations applied to PostgreSQL (DATABASE_URL)\n');
    expect((await runProcess('bin/migrate.ts', [], env)).code).toBe(0);
  }, 120_000);

  it("names the embedded database when npm run migrate reaches it through its owner's socket", async () => {
    // The README's commands run beside npm start, which owns the directory: the tool connects with the PostgreSQL
    // driver to the owner's socket, and must still say which database it migrated.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-migrate-'));
    const owner = await openDatabase({ dataDir, embeddedRole: 'service' });
    try {
      const run = await runProcess('bin/migrate.ts', [], { DATABASE_URL: '', DATA_DIR: dataDir });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`migrations applied to embedded PGlite in ${dataDir}\n`);
    } finally {
      await owner.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('statement timeout', () => {
  it('cancels a service statement that runs longer than DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    const runtime = await createTestRuntime({ DATABASE_STATEMENT_TIMEOUT_MS: '200' });
    try {
      const error = await runtime.database.query(sql`SELECT pg_sleep(2)`).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(pgErrorCode(error)).toBe('57014'); // query_canceled
      expect(await runtime.database.query(sql`SELECT 1 AS ok`)).toEqual([{ ok: 1 }]);
    } finally {
      await runtime.close();
    }
  });
});
