import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from './client.js';

/**
 * Runs a fixed statement text with parameters as a named prepared statement where the driver allows it: postgres.js
 * prepares each distinct text once per connection and then only binds and executes it, so PostgreSQL skips parsing
 * and analysis on every later call (planning still happens per call while the planner keeps choosing custom plans,
 * which it does when a parameter's value changes the best plan). drizzle's `execute` sends every raw statement
 * unnamed, parsed again each time.
 *
 * The text must be a constant (never built from request values): postgres.js keys its statements by text, so
 * texts that vary would fill every connection with statements. Connections that were opened with `prepare: false`
 * (the embedded database's shared session) and PGlite run it unnamed.
 */
interface PostgresJsClient {
  unsafe(text: string, params: unknown[], options: { prepare: boolean }): Promise<unknown[]>;
}
interface PgliteClient {
  query(text: string, params: unknown[]): Promise<{ rows: unknown[] }>;
}

export async function preparedRows<T>(db: Db, text: string, params: unknown[]): Promise<T[]> {
  const client = (db as unknown as { $client: PostgresJsClient | PgliteClient }).$client;
  if ('unsafe' in client && typeof client.unsafe === 'function')
    return (await client.unsafe(text, params, { prepare: true })) as T[];
  return (await (client as PgliteClient).query(text, params)).rows as T[];
}

const DIALECT = new PgDialect();

/**
 * A drizzle statement run as a named prepared statement (above). Every value in it must be a parameter (`${value}`),
 * never `sql.raw` of a request's value, so that its text depends only on its shape.
 */
export function preparedQuery<T>(db: Db, statement: SQL): Promise<T[]> {
  const { sql: text, params } = DIALECT.sqlToQuery(statement);
  return preparedRows<T>(db, text, params);
}
