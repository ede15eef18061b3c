import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { iso, rows } from './pagination.js';
import { seekPage, type PaginationWithCursor, type SeekOrder, type SeekParams } from './seek.js';

export const BADGE_CLASSES = ['gold', 'silver', 'bronze'] as const;
export type BadgeClass = (typeof BADGE_CLASSES)[number];

/** One badge a user earned. */
export interface BadgeAward {
  id: number;
  user_id: number;
  name: string;
  class: BadgeClass;
  tag_based: boolean;
  /** The question or answer it was earned for, when the source said. */
  post_id: number | null;
  awarded_at: string;
}

/** A badge of the site: its name and class, and how many times it was awarded. */
export interface SiteBadge {
  name: string;
  class: BadgeClass;
  tag_based: boolean;
  award_count: number;
}

export const SITE_BADGE_SORTS = ['class', 'name', 'awards'] as const;
export type SiteBadgeSort = (typeof SITE_BADGE_SORTS)[number];

const COLUMNS = sql`b.id, b.user_id, b.name, b.class, b.tag_based, b.post_id, ${iso(sql`b.awarded_at`)} AS awarded_at`;

// Newest first on the (user_id, awarded_at DESC, id DESC) index of migration 0014.
const NEWEST: SeekOrder = {
  direction: 'desc',
  keys: [
    { expr: sql`b.awarded_at`, type: 'timestamptz' },
    { expr: sql`b.id`, type: 'int' },
  ],
};

const CLASS_RANK = sql`CASE b.class WHEN 'gold' THEN 1 WHEN 'silver' THEN 2 ELSE 3 END`;

// The site's badges: each order ascending, so the awards sort counts down as its negation; (name, rank, tag flag)
// ends every order and names one badge.
const SITE_KEYS = {
  rank: { expr: sql`g.rank`, type: 'int' },
  name: { expr: sql`g.name`, type: 'text' },
  tagBased: { expr: sql`g.tag_based::int`, type: 'int' },
  fewestAwards: { expr: sql`-g.award_count`, type: 'int' },
} as const;
const SITE_ORDERS: Record<SiteBadgeSort, SeekOrder> = {
  class: { direction: 'asc', keys: [SITE_KEYS.rank, SITE_KEYS.name, SITE_KEYS.tagBased] },
  name: { direction: 'asc', keys: [SITE_KEYS.name, SITE_KEYS.rank, SITE_KEYS.tagBased] },
  awards: {
    direction: 'asc',
    keys: [SITE_KEYS.fewestAwards, SITE_KEYS.name, SITE_KEYS.rank, SITE_KEYS.tagBased],
  },
};

export function badgeAwardsRepository(db: Db) {
  /** How many distinct badges the site has. */
  async function siteBadgeCount(): Promise<number> {
    const [row] = await rows<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM badge_awards GROUP BY name, class, tag_based) g`,
    );
    return row?.n ?? 0;
  }

  return {
    /**
     * One page of the awards of these users, newest first, by cursor or page number. The total is the sum of the
     * users' badge counts, which the loaders keep equal to their awards (shared/db/bulk/badge-counts.ts).
     */
    async forUsers(
      userIds: number[],
      params: SeekParams,
    ): Promise<{ badges: BadgeAward[]; pagination: PaginationWithCursor }> {
      const idArray = `{${userIds.join(',')}}`;
      const [count] = await rows<{ n: number }>(
        db,
        sql`SELECT coalesce(sum(badge_gold + badge_silver + badge_bronze), 0)::int AS n
            FROM users WHERE id = ANY(${idArray}::int[])`,
      );
      const { items, pagination } = await seekPage<BadgeAward>(
        db,
        {
          list: JSON.stringify(['badges', userIds]),
          columns: COLUMNS,
          from: sql`badge_awards b`,
          where: sql`b.user_id = ANY(${idArray}::int[])`,
          order: NEWEST,
          total: count?.n ?? 0,
        },
        params,
      );
      return { badges: items, pagination };
    },

    /** Awards by id, in the order asked (the timeline's badge events). */
    async byIds(ids: number[]): Promise<Map<number, BadgeAward>> {
      if (ids.length === 0) return new Map();
      const found = await rows<BadgeAward>(
        db,
        sql`SELECT ${COLUMNS} FROM badge_awards b WHERE b.id = ANY(${`{${ids.join(',')}}`}::int[])`,
      );
      return new Map(found.map((b) => [b.id, b]));
    },

    /**
     * The site's badges, one per name, class and tag flag, with their award counts: gold first (then name) by
     * default, or by name, or most awarded first; by cursor or page number (seek.ts: every order is ascending on
     * keys that end with the badge's name, class and tag flag, unique per badge). Every award is read (an index-only
     * scan of the name index), so the route is cached like every public read.
     */
    async site(
      sort: SiteBadgeSort,
      params: SeekParams,
    ): Promise<{ badges: SiteBadge[]; pagination: PaginationWithCursor }> {
      const { items, pagination } = await seekPage<SiteBadge>(
        db,
        {
          list: JSON.stringify(['site-badges', sort]),
          columns: sql`g.name, g.class, g.tag_based, g.award_count`,
          from: sql`(SELECT b.name, b.class, b.tag_based, ${CLASS_RANK} AS rank, count(*)::int AS award_count
                     FROM badge_awards b GROUP BY b.name, b.class, b.tag_based) g`,
          where: sql`true`,
          order: SITE_ORDERS[sort],
          total: await siteBadgeCount(),
        },
        params,
      );
      return { badges: items, pagination };
    },
  };
}
