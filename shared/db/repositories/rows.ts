import type { SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../client.js';

/** A database or a transaction: whatever runs raw SQL. */
export type Executor = Pick<Db, 'execute'>;

/** Raw SQL rows whichever driver runs underneath (postgres.js answers an array, PGlite `{rows}`). */
export async function rows<T>(db: Executor, statement: SQL): Promise<T[]> {
  return rowsOf<T>(await (db.execute(statement) as Promise<Parameters<typeof rowsOf>[0]>));
}
