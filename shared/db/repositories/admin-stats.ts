import { count, gte, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { apiKeys, digestSends, subscribers } from '../schema/index.js';

/** The counts the admin panel's overview and newsletter pages show. Read-only. */
export function adminStatsRepository(db: Db) {
  return {
    async activeKeys(): Promise<number> {
      const [row] = await db.select({ n: count() }).from(apiKeys).where(isNull(apiKeys.revokedAt));
      return row?.n ?? 0;
    },
    async subscribers(): Promise<number> {
      const [row] = await db.select({ n: count() }).from(subscribers);
      return row?.n ?? 0;
    },
    subscribersByState() {
      return db
        .select({ frequency: subscribers.frequency, status: subscribers.status, n: count() })
        .from(subscribers)
        .groupBy(subscribers.frequency, subscribers.status);
    },
    digestSendsByStatus(days: number) {
      return db
        .select({ status: digestSends.status, n: count() })
        .from(digestSends)
        .where(gte(digestSends.createdAt, sql`now() - make_interval(days => ${days})`))
        .groupBy(digestSends.status);
    },
  };
}
