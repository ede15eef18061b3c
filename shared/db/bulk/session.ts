import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Progress } from '../../progress.js';
import type { Database } from '../client.js';

/**
 * One transaction on one connection, with raw parameterised SQL: what bulk loaders need and what drizzle's
 * query builder makes slow (a parameter per value). Works on postgres.js and PGlite alike.
 */
export interface BulkSession {
  query<T extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: string[],
  ): Promise<T[]>;
  /**
   * Streams rows in PostgreSQL's COPY text format (`copyText`) into table (columns): far cheaper per row than an
   * INSERT, nothing to parse but the values. Absent where the driver has no COPY FROM STDIN (PGlite): loaders
   * then insert.
   */
  copy?: (table: string, columns: readonly string[], text: string) => Promise<void>;
  /** Told of every batch written, for a progress display. */
  progress?: Progress;
}

export interface BulkOptions {
  /**
   * Switch triggers (counters, and foreign-key checks, which are triggers too) off for the transaction. The
   * loader must then write consistent rows itself and finish with `SELECT agora_recount()`. Needs a superuser
   * (or, from PostgreSQL 15, a role granted SET on session_replication_role).
   */
  triggersOff?: boolean;
  progress?: Progress;
}

interface PostgresJsTransaction {
  unsafe(text: string, params?: string[]): Promise<unknown> & { writable(): Promise<Writable> };
}
interface PostgresJsClient {
  begin<T>(fn: (tx: PostgresJsTransaction) => Promise<T>): Promise<T>;
}
interface PgliteClient {
  transaction<T>(
    fn: (tx: { query(text: string, params?: string[]): Promise<{ rows: unknown[] }> }) => Promise<T>,
  ): Promise<T>;
}

/**
 * The embedded database's socket (client.ts) reaches PGlite, which serves no COPY from a client: loaders insert
 * there. postgres.js keeps the unix socket's path in its options.
 */
const viaEmbeddedSocket = (client: unknown): boolean =>
  Boolean((client as { options?: { path?: unknown } }).options?.path);

export async function runBulk<T>(
  database: Database,
  options: BulkOptions,
  fn: (session: BulkSession) => Promise<T>,
): Promise<T> {
  const client = (database.db as unknown as { $client: unknown }).$client;
  const prepare = async (session: BulkSession) => {
    if (options.triggersOff) await session.query('SET LOCAL session_replication_role = replica');
    return fn(session);
  };
  if (database.kind === 'postgres') {
    return (client as PostgresJsClient).begin((tx) => {
      // One statement at a time on the transaction's connection, in the order asked: a loader may send a COPY
      // without waiting for it (BatchInserter), and postgres.js cannot queue a COPY behind another statement.
      let last: Promise<unknown> = Promise.resolve();
      const serial = <R>(run: () => Promise<R>): Promise<R> => {
        const next = last.then(run);
        last = next.catch(() => {});
        return next;
      };
      return prepare({
        query: <R>(text: string, params?: string[]) =>
          serial(async () => (await tx.unsafe(text, params ?? [])) as R[]),
        copy: viaEmbeddedSocket(client)
          ? undefined
          : (table, columns, text) =>
              serial(async () => {
                const names = columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(', ');
                const target = await tx
                  .unsafe(`COPY "${table.replace(/"/g, '""')}" (${names}) FROM STDIN`)
                  .writable();
                await pipeline(Readable.from([text]), target);
              }),
        progress: options.progress,
      });
    });
  }
  return (client as PgliteClient).transaction((tx) =>
    prepare({
      query: async <R>(text: string, params?: string[]) => (await tx.query(text, params ?? [])).rows as R[],
      progress: options.progress,
    }),
  );
}
