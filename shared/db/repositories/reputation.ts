import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { rows } from './pagination.js';

/**
 * Reputation moves inside the transaction that writes the vote or acceptance causing it, so the two can never
 * disagree. Rows are locked in ascending user id (two transactions that touch the same users lock them in the same
 * order and cannot deadlock on each other), then updated by one statement, so that the reputation buckets its
 * trigger counts (migration 0028) are written once, in their own order.
 */
export function reputationRepository(db: Db) {
  return {
    async apply(deltas: Map<number, number>): Promise<void> {
      const ordered = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => a - b);
      if (ordered.length === 0) return;
      const ids = `{${ordered.map(([id]) => id).join(',')}}`;
      const changes = `{${ordered.map(([, delta]) => delta).join(',')}}`;
      await db.execute(sql`SELECT id FROM users WHERE id = ANY(${ids}::int[]) ORDER BY id FOR NO KEY UPDATE`);
      await db.execute(sql`UPDATE users u SET reputation = u.reputation + d.delta
                           FROM unnest(${ids}::int[], ${changes}::int[]) AS d(id, delta) WHERE u.id = d.id`);
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
