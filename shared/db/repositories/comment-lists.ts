import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { preparedQuery } from '../prepared.js';
import { iso, markdownOf } from './pagination.js';
import { seekPage, type PaginationWithCursor, type SeekOrder, type SeekParams } from './seek.js';
import { idsOf, inIdSet, type IdSet } from './id-set.js';
import {
  boundedCount,
  boundedPagination,
  directed,
  isWindowed,
  windowConditions,
  windowName,
  type WindowParams,
} from './windows.js';

export const COMMENT_SORTS = ['newest', 'oldest', 'votes'] as const;
export type CommentSort = (typeof COMMENT_SORTS)[number];

/** A Comment as the API shows it (services/qa/schemas.ts). */
export interface CommentView {
  id: number;
  content: string;
  content_markdown?: string;
  votes: number;
  author: { id: number; username: string };
  created_at: string;
}

/** A comment on its own (comment lists): the Comment with the post it is on and that post's question. */
export interface CommentOnPost extends CommentView {
  post_type: 'question' | 'answer';
  post_id: number;
  question_id: number;
}

interface Row extends Omit<CommentOnPost, 'author' | 'content_markdown'> {
  content_markdown: string | null;
  author_id: number;
  author_username: string;
}

const COLUMNS = sql`c.id, c.content, c.content_markdown, c.votes, ${iso(sql`c.created_at`)} AS created_at,
  u.id AS author_id, u.username AS author_username,
  CASE WHEN c.answer_id IS NULL THEN 'question' ELSE 'answer' END AS post_type,
  coalesce(c.answer_id, c.question_id) AS post_id, coalesce(c.question_id, a.question_id) AS question_id`;

const toView = (r: Row): CommentOnPost => ({
  id: r.id,
  content: r.content,
  ...markdownOf(r.content_markdown),
  votes: r.votes,
  author: { id: r.author_id, username: r.author_username },
  created_at: r.created_at,
  post_type: r.post_type,
  post_id: r.post_id,
  question_id: r.question_id,
});

/** Which comments: all of them, a user's, or a post's. */
export type CommentScope =
  | { kind: 'all' }
  | { kind: 'user'; id: IdSet }
  | { kind: 'question'; id: number }
  | { kind: 'answer'; id: number };

export interface CommentListParams extends SeekParams, WindowParams {
  sort: CommentSort;
}

const key = (column: string, type: 'timestamptz' | 'int') => ({ expr: sql.raw(`c.${column}`), type });

/**
 * The order of a scope's index: the site's and a user's comments have descending indexes (0011), a post's the
 * ascending (post, created_at, id) ones of 0001 (a conversation reads oldest first). Votes within a post are few.
 */
// One order object per shape, built once (seek.ts builds its fragments once per order object).
const ORDERS = new Map<string, SeekOrder>();

function baseOrder(scope: CommentScope, sort: CommentSort): SeekOrder {
  const direction = scope.kind === 'question' || scope.kind === 'answer' ? 'asc' : 'desc';
  const name = `${direction}:${sort}`;
  let found = ORDERS.get(name);
  if (found) return found;
  const first = sort === 'votes' ? key('votes', 'int') : key('created_at', 'timestamptz');
  found = { direction: sort === 'votes' ? 'desc' : direction, keys: [first, key('id', 'int')] };
  ORDERS.set(name, found);
  return found;
}

export function commentListsRepository(db: Db) {
  async function byIds(ids: number[]): Promise<CommentOnPost[]> {
    if (ids.length === 0) return [];
    const found = await preparedQuery<Row>(
      db,
      sql`SELECT ${COLUMNS} FROM unnest(${`{${ids.join(',')}}`}::int[]) WITH ORDINALITY AS page(id, n)
          JOIN comments c ON c.id = page.id JOIN users u ON u.id = c.author_id
          LEFT JOIN answers a ON a.id = c.answer_id ORDER BY page.n`,
      { plans: 'reusable' },
    );
    return found.map(toView);
  }

  /** The exact total where a counter keeps it (the site's, a user's), else a bounded count (a post's: a few). */
  async function total(
    scope: CommentScope,
    from: SQL,
    where: SQL,
    windowed: boolean,
  ): Promise<{ n: number | SQL; bounded: boolean }> {
    if (windowed || scope.kind === 'question' || scope.kind === 'answer') {
      return { n: await boundedCount(db, from, where), bounded: true };
    }
    const names = scope.kind === 'all' ? ['comments'] : idsOf(scope.id).map((id) => `user:${id}:comments`);
    return {
      n: sql`coalesce((SELECT sum(n) FROM list_counts WHERE scope = ANY(${`{${names.join(',')}}`}::text[])), 0)::int`,
      bounded: false,
    };
  }

  return {
    async list(
      scope: CommentScope,
      params: CommentListParams,
    ): Promise<{ comments: CommentOnPost[]; pagination: PaginationWithCursor }> {
      const wanted = params.order ?? (params.sort === 'oldest' ? 'asc' : 'desc');
      const order = directed(baseOrder(scope, params.sort), wanted);
      const conditions: SQL[] = [sql`true`];
      if (scope.kind === 'user') conditions.push(inIdSet(sql`c.author_id`, scope.id));
      if (scope.kind === 'question') conditions.push(sql`c.question_id = ${scope.id}`);
      if (scope.kind === 'answer') conditions.push(sql`c.answer_id = ${scope.id}`);
      conditions.push(...windowConditions(params, sql`c.created_at`, order.keys[0]!));
      const from = sql`comments c`;
      const where = sql.join(conditions, sql` AND `);
      const count = await total(scope, from, where, isWindowed(params));
      const { items, pagination } = await seekPage<{ id: number }>(
        db,
        {
          list: JSON.stringify(['comments', scope, params.sort, ...windowName(params)]),
          columns: sql`c.id AS id`,
          from,
          where,
          order,
          total: count.n,
          bounded: count.bounded,
          // All the site's comments: by date, the day counters find where a deep page starts; by votes, the value
          // counts do.
          days: scope.kind === 'all' && !count.bounded && params.sort !== 'votes' ? 'comments' : undefined,
          values:
            scope.kind === 'all' && !count.bounded && params.sort === 'votes' ? 'comments:votes' : undefined,
        },
        params,
      );
      return {
        comments: await byIds(items.map((r) => r.id)),
        pagination: boundedPagination(pagination, count),
      };
    },
  };
}
