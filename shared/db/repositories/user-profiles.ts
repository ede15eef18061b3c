import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { isInt4Id } from '../int4.js';
import { iso, offsetOf, paginate, rows, type PageParams, type Pagination } from './pagination.js';

export const USER_SORTS = ['reputation', 'newest', 'name'] as const;
export type UserSort = (typeof USER_SORTS)[number];

/** The public profile (spec: User); the user list answers the same shape. */
export interface UserProfile {
  id: number;
  username: string;
  display_name: string;
  avatar: string;
  bio: string;
  reputation: number;
  badges: { gold: number; silver: number; bronze: number };
  questions_count: number;
  answers_count: number;
  joined_at: string;
}

interface ProfileRow extends Omit<UserProfile, 'badges'> {
  badge_gold: number;
  badge_silver: number;
  badge_bronze: number;
}

// Each order is an index of the users table; name sorts by display name (what a reader sees), case-insensitively
// and by the collation of migration 0008, then id.
const ORDER: Record<UserSort, SQL> = {
  reputation: sql`reputation DESC NULLS LAST, id DESC NULLS LAST`,
  newest: sql`created_at DESC NULLS LAST, id DESC NULLS LAST`,
  name: sql`lower(display_name) COLLATE agora_names ASC, id ASC`,
};

const COLUMNS = sql`id, username, display_name, avatar, bio, reputation, badge_gold, badge_silver, badge_bronze,
  questions_count, answers_count, ${iso(sql`created_at`)} AS joined_at`;

const toProfile = ({ badge_gold, badge_silver, badge_bronze, ...rest }: ProfileRow): UserProfile => ({
  ...rest,
  badges: { gold: badge_gold, silver: badge_silver, bronze: badge_bronze },
});

export function userProfilesRepository(db: Db) {
  return {
    async list(
      params: PageParams & { sort: UserSort },
    ): Promise<{ users: UserProfile[]; pagination: Pagination }> {
      const [found, [count]] = await Promise.all([
        rows<ProfileRow>(
          db,
          sql`SELECT ${COLUMNS} FROM users ORDER BY ${ORDER[params.sort]} LIMIT ${params.limit} OFFSET ${offsetOf(params)}`,
        ),
        rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM users`),
      ]);
      return { users: found.map(toProfile), pagination: paginate(params, count?.n ?? 0) };
    },

    async find(id: number): Promise<UserProfile | undefined> {
      if (!isInt4Id(id)) return undefined;
      const [row] = await rows<ProfileRow>(db, sql`SELECT ${COLUMNS} FROM users WHERE id = ${id}`);
      return row ? toProfile(row) : undefined;
    },
  };
}
