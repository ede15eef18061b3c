import { mkdirSync } from 'node:fs';
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Runs raw SQL and returns its rows, whichever driver is underneath. */
  query<T extends Record<string, unknown>>(statement: SQL): Promise<T[]>;
  /** Runs fn while holding a session-level advisory lock on one dedicated connection. */
  withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  /**
   * LISTENs on a channel: onNotify gets each NOTIFY's payload; onListen runs every time the LISTEN is in place,
   * the first time and after every reconnection (notifications sent while disconnected are lost, so a listener
   * that mirrors state must treat it as "anything may have changed"). Resolves once listening; the returned
   * function stops it.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onListen: () => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  maxConnections?: number;
  /** PostgreSQL's statement_timeout for every connection; 0 or absent: none (bulk loaders, migrations). */
  statementTimeoutMs?: number;
}

type RawResult = unknown[] | { rows: unknown[] };
const rowsOf = <T>(result: RawResult): T[] => (Array.isArray(result) ? result : result.rows) as T[];

/** PostgreSQL when DATABASE_URL is set; otherwise an embedded PGlite in dataDir, so `npm start` needs no server. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.maxConnections ?? 10, options.statementTimeoutMs ?? 0)
    : openPglite(options.dataDir);
}

async function openPostgres(url: string, max: number, statementTimeoutMs: number): Promise<Database> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const client = postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: 10,
    idle_timeout: 60,
    connection: statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {},
    // Count and id columns are bigint in aggregates; our values fit in a double.
    types: {
      bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    },
  });
  const db = drizzle(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    query: async (statement) => rowsOf(await (db.execute(statement) as Promise<RawResult>)),
    async withAdvisoryLock(key, fn) {
      const reserved = await client.reserve();
      try {
        await reserved`SELECT pg_advisory_lock(${key})`;
        return await fn();
      } finally {
        await reserved`SELECT pg_advisory_unlock(${key})`.catch(() => {});
        reserved.release();
      }
    },
    // postgres.js LISTENs on one extra connection per client (outside the pool, no idle timeout) and LISTENs again
    // on a new connection whenever it drops, retrying with backoff, calling onListen each time it succeeds.
    // Its unlisten() only detaches the first connection's listener, so the callbacks are switched off here too: after
    // a reconnection a stopped listener must hear nothing.
    async listen(channel, onNotify, onListen) {
      let active = true;
      const { unlisten } = await client.listen(
        channel,
        (payload) => active && onNotify(payload),
        () => active && onListen(),
      );
      return async () => {
        active = false;
        await unlisten();
      };
    },
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { drizzle } = await import('drizzle-orm/pglite');
  mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  const db = drizzle(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    query: async (statement) => rowsOf(await (db.execute(statement) as Promise<RawResult>)),
    // PGlite is one session in one process: nothing else can race the migration.
    withAdvisoryLock: (_key, fn) => fn(),
    // In-process: the LISTEN can never be lost, so onListen runs once.
    async listen(channel, onNotify, onListen) {
      const unlisten = await client.listen(channel, onNotify);
      onListen();
      return () => unlisten();
    },
    close: () => client.close(),
  };
}
