import type { BulkSession } from './session.js';

/**
 * Sets every user's badge_gold/silver/bronze to the number of their badge_awards rows of that class, and moves the
 * awards' id sequence past the largest id. The loaders that write awards (import, seed) call it once after the
 * rows, in their transaction, so the counts a profile shows and the awards its badge list pages always agree.
 * Only rows whose counts differ are rewritten.
 */
export async function syncBadgeCounts(session: BulkSession): Promise<void> {
  await session.query(
    `UPDATE users u SET badge_gold = c.gold, badge_silver = c.silver, badge_bronze = c.bronze
     FROM (SELECT u.id,
                  count(b.id) FILTER (WHERE b.class = 'gold')::int AS gold,
                  count(b.id) FILTER (WHERE b.class = 'silver')::int AS silver,
                  count(b.id) FILTER (WHERE b.class = 'bronze')::int AS bronze
           FROM users u LEFT JOIN badge_awards b ON b.user_id = u.id GROUP BY u.id) c
     WHERE c.id = u.id AND (u.badge_gold, u.badge_silver, u.badge_bronze) IS DISTINCT FROM (c.gold, c.silver, c.bronze)`,
  );
  await session.query(
    `SELECT setval(pg_get_serial_sequence('badge_awards', 'id'), GREATEST((SELECT max(id) FROM badge_awards), 0) + 1, false)`,
  );
}
