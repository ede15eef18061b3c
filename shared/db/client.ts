import { mkdirSync } from 'node:fs';
import { sql, type SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import {
  claimOwnership,
  readOwner,
  releaseOwnership,
  serveEmbedded,
  type EmbeddedOwner,
} from './embedded-server.js';
import { setReusablePlanClient } from './prepared.js';
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
  /**
   * Who opens the embedded database: a long-running service waits for a command-line tool that owns it to finish,
   * then owns it; a tool uses whichever process owns it (embedded-server.ts). Default: tool.
   */
  embeddedRole?: EmbeddedOwner['kind'];
  maxConnections?: number;
  /** PostgreSQL's statement_timeout for every connection; 0 or absent: none (bulk loaders, migrations). */
  statementTimeoutMs?: number;
  /** PostgreSQL's idle_in_transaction_session_timeout for every connection; 0 or absent: none. */
  idleTransactionTimeoutMs?: number;
}

type RawResult = unknown[] | { rows: unknown[] };
/** The rows of a raw query's result: postgres.js answers an array, PGlite `{rows}`. */
export const rowsOf = <T>(result: RawResult): T[] => (Array.isArray(result) ? result : result.rows) as T[];

/** PostgreSQL when DATABASE_URL is set; otherwise an embedded PGlite in dataDir, so `npm start` needs no server. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres({ url: options.databaseUrl }, options.maxConnections ?? 10, {
        statementTimeoutMs: options.statementTimeoutMs ?? 0,
        idleTransactionTimeoutMs: options.idleTransactionTimeoutMs ?? 0,
      })
    : openEmbedded(options.dataDir, options.embeddedRole ?? 'tool', options.maxConnections ?? 4);
}

type PostgresTarget = { url: string } | { socket: string };

/**
 * While PostgreSQL is away, a query waits for its connection to be (re)established: these two bound that wait,
 * so that a request fails within a second or two (a 503, services/http/errors.ts) instead of hanging until the
 * server is back. A server that does not answer the handshake within the connect timeout counts as away.
 */
const CONNECT_TIMEOUT_SECONDS = 2;
/**
 * postgres.js waits this long before reconnecting a connection that failed; its default grows to 20 s after a
 * few failures, and every query queued on that connection waits with it. Short and capped here: a refused
 * connection costs the server nothing, and recovery is noticed within half a second.
 */
const reconnectDelaySeconds = (failures: number) =>
  Math.min(0.5, 0.05 * 2 ** failures) * (0.5 + Math.random() / 2);

/**
 * How the server notices a client host that fell silent (link cut, host powered off: no FIN, no RST). Its session
 * would otherwise live on for the operating system's keepalive time (two hours), holding whatever it held: a row
 * locked FOR UPDATE in an open transaction stalls every other worker's writes to that row (a list's chunks), a
 * session-level advisory lock keeps its task from every other process. Keepalive probes (first after 10 s of
 * silence, then every 5 s, 3 unanswered) end an idle session, and tcp_user_timeout one whose last reply was never
 * acknowledged, so either is gone about 25 s after the client's last word and its locks are free again. A live
 * client's kernel answers the probes however busy the process is, so a slow client is never cut off.
 */
const SILENT_CLIENT_SETTINGS = {
  tcp_keepalives_idle: 10,
  tcp_keepalives_interval: 5,
  tcp_keepalives_count: 3,
  tcp_user_timeout: 25_000,
};

interface SessionTimeouts {
  statementTimeoutMs: number;
  idleTransactionTimeoutMs: number;
}
const NO_TIMEOUTS: SessionTimeouts = { statementTimeoutMs: 0, idleTransactionTimeoutMs: 0 };

async function openPostgres(
  target: PostgresTarget,
  max: number,
  { statementTimeoutMs, idleTransactionTimeoutMs }: SessionTimeouts,
): Promise<Database> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const options = {
    max,
    onnotice: () => {},
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
    connection: {
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
      ...(idleTransactionTimeoutMs > 0
        ? { idle_in_transaction_session_timeout: idleTransactionTimeoutMs }
        : {}),
      // Named prepared statements (shared/db/prepared.ts) are planned for each call's values, never with a generic
      // plan: a search's best plan depends on how common its words are, and a generic plan chosen after a run of
      // common words walks the whole table for a rare one. They still skip parsing. Statements that declare their
      // plans reusable run on a second pool that plans each of them once (below). (The embedded database's
      // socket prepares nothing and gets no extra startup parameter.)
      ...('url' in target ? { plan_cache_mode: 'force_custom_plan', ...SILENT_CLIENT_SETTINGS } : {}),
    },
    // Count and id columns are bigint in aggregates; our values fit in a double.
    types: {
      bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    },
  };
  // The embedded database's socket leads to one shared PGlite session: statements stay unnamed, so that the
  // connections of several processes never collide on a prepared statement's name. Its handshake waits its turn
  // for that session, behind any other client's transaction (a seed, an upload) or a busy owner, as a query would
  // wait for a lock: no connect timeout, which would fail a command whose second connection waits more than 2 s.
  // An owner that is gone refuses or drops the connection at once.
  const client =
    'url' in target
      ? postgres(target.url, options)
      : postgres({
          ...options,
          connect_timeout: 0,
          path: target.socket,
          user: 'postgres',
          database: 'postgres',
          prepare: false,
        });
  const db = drizzle(client, { schema }) as unknown as Db;
  // Opened beside the first with the same bound; postgres.js connects lazily, so a process that runs no statement
  // with reusable plans (a tool, most workers) never opens one of its connections.
  let reusablePlans: typeof client | undefined;
  if ('url' in target) {
    // Generic plans always: PostgreSQL's own choice (`auto`) kept planning some of them for every call, because a
    // generic plan's estimate can exceed the custom plans' even where both plans are the same.
    reusablePlans = postgres(target.url, {
      ...options,
      connection: { ...options.connection, plan_cache_mode: 'force_generic_plan' },
    });
    // The same parsers and serializers as the first pool, which drizzle set (dates stay text, JSON passes as is).
    Object.assign(reusablePlans.options.parsers, client.options.parsers);
    Object.assign(reusablePlans.options.serializers, client.options.serializers);
    setReusablePlanClient(db, reusablePlans);
  }
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
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), reusablePlans?.end({ timeout: 5 })]);
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The embedded database: this process owns dataDir's PGlite and serves it to others, or it reaches the owner's
 * PGlite through its socket. A service waits while a command-line tool owns it, so that the service, which
 * outlives tools, ends up the owner.
 */
async function openEmbedded(dataDir: string, role: EmbeddedOwner['kind'], max: number): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  let told = false;
  for (;;) {
    if (claimOwnership(dataDir, role)) {
      try {
        return await openPglite(dataDir, role);
      } catch (err) {
        releaseOwnership(dataDir);
        throw err;
      }
    }
    const owner = readOwner(dataDir);
    if (owner === undefined) continue;
    if (owner !== 'starting' && !(role === 'service' && owner.kind === 'tool')) {
      const database = await openPostgres({ socket: owner.socket }, max, NO_TIMEOUTS);
      try {
        await database.query(sql`SELECT 1`);
        return database;
      } catch {
        // The owner is closing or not yet listening: ask again.
        await database.close();
      }
    } else if (!told && owner !== 'starting') {
      told = true;
      process.stderr.write(
        `The embedded database in ${dataDir} is in use by process ${owner.pid} (a command); waiting for it to finish.\n`,
      );
    }
    await sleep(200);
  }
}

async function openPglite(dataDir: string, role: EmbeddedOwner['kind']): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { drizzle } = await import('drizzle-orm/pglite');
  const client = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  const server = await serveEmbedded(client, dataDir, role);
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
    async close() {
      await server.close();
      await client.close();
    },
  };
}
