import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { rows } from './pagination.js';

/**
 * Reputation moves inside the transaction that writes the vote or acceptance causing it, so the two can never
 * disagree. Rows are updated in ascending user id: two transactions that touch the same users lock them in the
 * same order and cannot deadlock on each other.
 */
export function reputationRepository(db: Db) {
  return {
    async apply(deltas: Map<number, number>): Promise<void> {
      const ordered = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => a - b);
      for (const [userId, delta] of ordered) {
        await db.execute(sql`UPDATE users SET reputation = reputation + ${delta} WHERE id = ${userId}`);
      }
    },

    async of(userId: number): Promise<number | undefined> {
      const [row] = await rows<{ reputation: number }>(
        db,
        sql`SELECT reputation FROM users WHERE id = ${userId}`,
      );
      return row?.reputation;
    },
  };
}
