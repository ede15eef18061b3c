import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { JsonText } from '../json-text.js';
import { isInt4Id } from '../int4.js';
import { iso } from './pagination.js';
import { preparedQuery } from '../prepared.js';
import {
  boundedCount,
  boundedPagination,
  directed,
  isWindowed,
  windowConditions,
  windowName,
  type WindowParams,
} from './windows.js';
import {
  listCounter,
  seekPage,
  type PaginationWithCursor,
  type SeekOrder,
  type SeekParams,
  type ValueCounted,
} from './seek.js';

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

// Each order is an index of the users table (reputation, created, name); name sorts by display name (what a reader
// sees), case-insensitively and by the collation of migration 0008, then id.
const ORDER: Record<UserSort, SeekOrder> = {
  reputation: {
    direction: 'desc',
    keys: [
      { expr: sql`reputation`, type: 'int' },
      { expr: sql`id`, type: 'int' },
    ],
  },
  newest: {
    direction: 'desc',
    keys: [
      { expr: sql`created_at`, type: 'timestamptz' },
      { expr: sql`id`, type: 'int' },
    ],
  },
  name: {
    direction: 'asc',
    keys: [
      { expr: sql`lower(display_name) COLLATE agora_names`, type: 'text' },
      { expr: sql`id`, type: 'int' },
    ],
  },
};

/** The sorts whose lists have counts per value (migrations 0028 and 0036; seek.ts, valueAnchor). */
const VALUE_COUNTED: Partial<Record<UserSort, ValueCounted>> = {
  reputation: 'users:reputation',
  name: 'users:name',
};

const COLUMNS = sql`id, username, display_name, avatar, bio, reputation, badge_gold, badge_silver, badge_bronze,
  questions_count, answers_count, ${iso(sql`created_at`)} AS joined_at`;

/**
 * A User as JSON text, from `ru`: the bytes the response schema's serialiser writes (members in the schema's order,
 * no spaces). row_to_json writes compactly, with the columns' names as members, in one pass (json_strip_nulls of
 * json_build_object, the other way to take the spaces out, parses the object again); every column is NOT NULL.
 */
const PROFILE_JSON = sql`(SELECT row_to_json(r) FROM (SELECT ru.id, ru.username, ru.display_name, ru.avatar, ru.bio,
  ru.reputation, (SELECT row_to_json(b) FROM (SELECT ru.badge_gold AS gold, ru.badge_silver AS silver,
  ru.badge_bronze AS bronze) b) AS badges, ru.questions_count, ru.answers_count,
  ${iso(sql`ru.created_at`)} AS joined_at) r)::text`;

const toProfile = ({ badge_gold, badge_silver, badge_bronze, ...rest }: ProfileRow): UserProfile => ({
  ...rest,
  badges: { gold: badge_gold, silver: badge_silver, bronze: badge_bronze },
});

export function userProfilesRepository(db: Db) {
  /**
   * The page's profiles as the API's JSON, rendered by PostgreSQL and sent as they are (json-text.ts): a statement
   * of its own by ids, on reusable plans, so that the page's statement (planned for its values) stays a scan of one
   * index.
   */
  async function profilesJson(ids: number[]): Promise<JsonText> {
    if (ids.length === 0) return new JsonText('[]');
    const [row] = await preparedQuery<{ json: string | null }>(
      db,
      sql`SELECT '[' || string_agg(${PROFILE_JSON}, ',' ORDER BY page.n) || ']' AS json
          FROM unnest(${`{${ids.join(',')}}`}::int[]) WITH ORDINALITY AS page(id, n) JOIN users ru ON ru.id = page.id`,
      { plans: 'reusable' },
    );
    return new JsonText(row?.json ?? '[]');
  }

  return {
    /** One page by page number or cursor; the total is the maintained 'users' counter (migration 0009). */
    async list(
      params: SeekParams & WindowParams & { sort: UserSort },
    ): Promise<{ users: JsonText; pagination: PaginationWithCursor }> {
      const order = directed(ORDER[params.sort], params.order);
      const windowed = isWindowed(params);
      const where = sql.join(
        [sql`true`, ...windowConditions(params, sql`created_at`, order.keys[0]!)],
        sql` AND `,
      );
      const total = windowed ? await boundedCount(db, sql`users`, where) : listCounter(sql`'users'`);
      // The first list of each sort keeps its name, so cursors issued before windows existed stay valid.
      const name =
        windowed || params.order ? ['users', params.sort, ...windowName(params)] : ['users', params.sort];
      const { items, pagination } = await seekPage<{ id: number }>(
        db,
        {
          list: JSON.stringify(name),
          columns: sql`id`,
          from: sql`users`,
          where,
          order,
          total,
          bounded: windowed,
          values: windowed ? undefined : VALUE_COUNTED[params.sort],
          days: !windowed && params.sort === 'newest' ? 'users' : undefined,
        },
        params,
      );
      return {
        users: await profilesJson(items.map((r) => r.id)),
        pagination: boundedPagination(pagination, { bounded: windowed }),
      };
    },

    /** The profiles of the given ids, in that order; unknown ids are left out. */
    async findMany(ids: number[]): Promise<UserProfile[]> {
      const known = ids.filter(isInt4Id);
      if (known.length === 0) return [];
      const found = await preparedQuery<ProfileRow>(
        db,
        sql`SELECT ${COLUMNS} FROM unnest(${`{${known.join(',')}}`}::int[]) WITH ORDINALITY AS page(pid, n)
            JOIN users ON users.id = page.pid ORDER BY page.n`,
        { plans: 'reusable' },
      );
      return found.map(toProfile);
    },

    async find(id: number): Promise<UserProfile | undefined> {
      if (!isInt4Id(id)) return undefined;
      const [row] = await preparedQuery<ProfileRow>(db, sql`SELECT ${COLUMNS} FROM users WHERE id = ${id}`, {
        plans: 'reusable',
      });
      return row ? toProfile(row) : undefined;
    },
  };
}
