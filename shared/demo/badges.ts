import type { BulkSession } from '../db/bulk/session.js';

/** Badge names of the demo's awards, per class (Stack Exchange's own, so the demo reads like a real site). */
const NAMES = {
  gold: ['Great Answer', 'Great Question', 'Famous Question', 'Populist', 'Fanatic'],
  silver: ['Good Answer', 'Good Question', 'Notable Question', 'Enthusiast', 'Yearling', 'Necromancer'],
  bronze: [
    'Nice Answer',
    'Nice Question',
    'Popular Question',
    'Student',
    'Teacher',
    'Scholar',
    'Editor',
    'Supporter',
  ],
} as const;

const array = (names: readonly string[]) =>
  `ARRAY[${names.map((n) => `'${n.replace(/'/g, "''")}'`).join(', ')}]`;

/**
 * Writes one badge award per badge the generated users hold (users.badge_gold/silver/bronze), in one set-based
 * statement: names and dates come from arithmetic on (user, class, n), so the same users give the same awards,
 * each dated between the user's sign-up and the site's latest question. The caller then syncs the users' counts
 * (syncBadgeCounts), which these awards already match.
 */
export async function awardDemoBadges(session: BulkSession): Promise<number> {
  const [row] = await session.query<{ n: number }>(
    `WITH inserted AS (
       INSERT INTO badge_awards (user_id, name, class, awarded_at)
       SELECT u.id, c.names[1 + (u.id * 7 + k * 13) % cardinality(c.names)], c.class,
              u.created_at + (e.at - u.created_at)
                * (((u.id::bigint * 2654435761 + k * 40503 + c.rank * 97) % 100000) / 100000.0)
       FROM users u CROSS JOIN (SELECT coalesce(max(created_at), now()) AS at FROM questions) e
       CROSS JOIN LATERAL (VALUES (1, 'gold', u.badge_gold, ${array(NAMES.gold)}),
                                  (2, 'silver', u.badge_silver, ${array(NAMES.silver)}),
                                  (3, 'bronze', u.badge_bronze, ${array(NAMES.bronze)})) AS c(rank, class, n, names)
       CROSS JOIN LATERAL generate_series(1, c.n) AS k
       ORDER BY u.id, c.rank, k
       RETURNING 1)
     SELECT count(*)::int AS n FROM inserted`,
  );
  return Number(row?.n ?? 0);
}
