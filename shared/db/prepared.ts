import type { SQL } from 'drizzle-orm';
import type { Db } from './client.js';
import { statementText } from './statement-text.js';

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
 *
 * Plans: the service's connections make PostgreSQL plan every prepared statement for each call's values
 * (`plan_cache_mode = force_custom_plan`, client.ts), because for a search, a tag or a date window the best plan
 * depends on the values, and a generic plan chosen after a run of common ones can walk a whole table for a rare
 * one. A statement whose best plan is the same whatever its values (a lookup by primary key or by counter name)
 * can say `plans: 'reusable'`: it then runs on the database's second pool, whose connections plan each statement
 * once, for any values (`force_generic_plan`), so a large statement is not planned again on every call. (With
 * `auto`, PostgreSQL keeps a generic plan only when its estimate is no costlier than the custom plans' were, and the
 * deep pages' day anchor stayed planned per call.) Only the top-level handle has that pool; a transaction's
 * statements stay on the transaction's connection.
 */
interface PostgresJsClient {
  unsafe(text: string, params: unknown[], options: { prepare: boolean; simple: boolean }): Promise<unknown[]>;
}
interface PgliteClient {
  query(text: string, params: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface PlanChoice {
  /** 'per-call' (the default): planned for each call's values. 'reusable': PostgreSQL may keep a generic plan. */
  plans?: 'per-call' | 'reusable';
}

// A property of the handle, not an entry in a map keyed by it: the read-replica router (replicas/routing.ts) is a
// proxy that hands out the properties of whichever database the request reads from, this one included (which is
// why it is configurable: a proxy may not return another value for a fixed property of its target).
const REUSABLE_PLANS = Symbol('agora.reusablePlans');
type WithReusablePlans = { [REUSABLE_PLANS]?: PostgresJsClient };

/** Gives db a second pool for statements whose plans are reusable (client.ts opens it beside the first). */
export function setReusablePlanClient(db: Db, client: { unsafe: (...args: never[]) => unknown }): void {
  Object.defineProperty(db, REUSABLE_PLANS, { value: client, configurable: true });
}

export async function preparedRows<T>(
  db: Db,
  text: string,
  params: unknown[],
  { plans = 'per-call' }: PlanChoice = {},
): Promise<T[]> {
  const client =
    (plans === 'reusable' ? (db as unknown as WithReusablePlans)[REUSABLE_PLANS] : undefined) ??
    (db as unknown as { $client: PostgresJsClient | PgliteClient }).$client;
  if ('unsafe' in client && typeof client.unsafe === 'function')
    // simple: false, or postgres.js sends a statement without parameters as a simple query, parsed and planned again
    // on every call (a counter read, the site's totals).
    return (await client.unsafe(text, params, { prepare: true, simple: false })) as T[];
  return (await (client as PgliteClient).query(text, params)).rows as T[];
}

/**
 * A drizzle statement run as a named prepared statement (above). Every value in it must be a parameter (`${value}`),
 * never `sql.raw` of a request's value, so that its text depends only on its shape.
 */
export function preparedQuery<T>(db: Db, statement: SQL, choice: PlanChoice = {}): Promise<T[]> {
  const { sql: text, params } = statementText(statement);
  return preparedRows<T>(db, text, params, choice);
}
