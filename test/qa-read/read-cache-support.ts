import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../shared/db/client.js';

/**
 * For the read-cache tests: a TTL far longer than any test (so only an invalidation can explain a fresh answer)
 * and anonymous budgets out of the way.
 */
export const CACHE_ENV = {
  QA_READ_CACHE_TTL_MS: '600000',
  RATE_LIMIT_ANONYMOUS_HOURLY: '1000000',
  RATE_LIMIT_ANONYMOUS_DAILY: '1000000',
};

/**
 * Changes rows as a bulk loader does: triggers off, so no counter moves and PostgreSQL sends no change
 * notification. A read that still shows the old value afterwards was answered from the cache.
 */
export async function writeSilently(database: Database, statement: SQL): Promise<void> {
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL session_replication_role = replica`);
    await tx.execute(statement);
  });
}
