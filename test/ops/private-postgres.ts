import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { createApiKey } from '../../shared/access/admin.js';
import type { Database } from '../../shared/db/client.js';

const run = promisify(execFile);
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl on its own port and data directory), so that the test
 * can stop and start it: the shared server on 5432 is never touched. PostgreSQL refuses to run as root, so
 * under root the commands run as the `postgres` user, which owns the directory.
 */
export interface PrivatePostgres {
  port: number;
  url(database?: string): string;
  /** pg_ctl stop in fast mode: open sessions are terminated, new connections refused until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** pg_ctl stop in immediate mode: every process of the server quits at once, as if killed (a crash restart). */
  kill(): Promise<void>;
  destroy(): Promise<void>;
}

export const asPostgresUser = (command: string, args: string[]) =>
  process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);

/** A temporary directory the server's OS user owns (mode 0700, as PostgreSQL demands of its data directory). */
export async function serverDirectory(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agora-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    chownSync(dir, Number(stdout.trim()), -1);
    chmodSync(dir, 0o700);
  }
  return dir;
}

/** Runs the server whose data directory is `<dir>/data` on port; the socket and the log stay in dir. */
export async function runServer(dir: string, port: number): Promise<PrivatePostgres> {
  const data = path.join(dir, 'data');
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const pgCtl = (...args: string[]) =>
    asPostgresUser(`${PG_BIN}/pg_ctl`, ['-D', data, '-l', path.join(dir, 'log'), '-o', options, ...args]);
  const start = async () => {
    await pgCtl('-w', '-t', '60', 'start');
  };
  await start();
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start,
    stop: async () => {
      await pgCtl('-w', '-t', '60', '-m', 'fast', 'stop');
    },
    kill: async () => {
      await pgCtl('-w', '-t', '60', '-m', 'immediate', 'stop');
    },
    async destroy() {
      await pgCtl('-w', '-t', '60', '-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startPrivatePostgres(port: number): Promise<PrivatePostgres> {
  const dir = await serverDirectory();
  // initdb's defaults suit streaming replication already: wal_level=replica, max_wal_senders=10, and pg_hba.conf
  // lets local connections (trust, -A) open replication sessions (postgres-replica.ts).
  await asPostgresUser(`${PG_BIN}/initdb`, [
    '-D',
    path.join(dir, 'data'),
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  return runServer(dir, port);
}

/**
 * The rows the outage tests write through: the tags `brewing` and `yeast`, the user `writer` with a premium
 * `qa:write` key, and one question of theirs. Returns the key and the question's id.
 */
export async function addWriter(
  database: Database,
  question: { title: string; slug: string; content: string },
): Promise<{ key: string; questionId: number }> {
  await database.query(sql`INSERT INTO tags (name, slug) VALUES ('brewing', 'brewing'), ('yeast', 'yeast')`);
  await database.query(sql`INSERT INTO users (username, display_name) VALUES ('writer', 'Writer')`);
  const { key } = await createApiKey(database.db, {
    username: 'writer',
    plan: 'premium',
    scopes: ['qa:write'],
  });
  const [row] = await database.query<{ id: number }>(
    sql`INSERT INTO questions (title, slug, content, author_id)
        SELECT ${question.title}, ${question.slug}, ${question.content}, id FROM users WHERE username = 'writer'
        RETURNING id`,
  );
  return { key, questionId: row!.id };
}
