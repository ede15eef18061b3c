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

/**
 * Resolves once every agora_changes notification committed before the call has reached this database's LISTEN
 * connection, and so the read cache of an app built on it: a write's notification arrives some time after its
 * commit, and a late one from an earlier test would empty the cache between a test's "hit" and its assertion.
 * postgres.js keeps one LISTEN connection per database and calls its listeners in arrival order, which is commit
 * order; so when this marker reaches our own listener, the app's listener has already had every earlier one.
 */
export async function changesDelivered(database: Database, timeoutMs = 10_000): Promise<void> {
  const marker = `test-barrier-${process.pid}-${Date.now()}-${Math.random()}`;
  let arrived!: () => void;
  const received = new Promise<void>((resolve) => (arrived = resolve));
  const unlisten = await database.listen(
    'agora_changes',
    (payload) => payload === marker && arrived(),
    () => {},
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    await database.query(sql`SELECT pg_notify('agora_changes', ${marker})`);
    await Promise.race([
      received,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`agora_changes marker not received in ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await unlisten();
  }
}
