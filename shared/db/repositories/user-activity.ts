import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { iso, rows } from './pagination.js';
import { seekPage, type SeekOrder } from './seek.js';

export const USER_TAG_SORTS = ['score', 'count'] as const;
export type UserTagSort = (typeof USER_TAG_SORTS)[number];

/** A tag a user answered (or asked) in, with the score and number of their answers and questions there. */
export interface UserTag {
  name: string;
  slug: string;
  answer_score: number;
  answer_count: number;
  question_score: number;
  question_count: number;
}

export const TIMELINE_TYPES = ['question', 'answer', 'comment', 'accepted'] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

export interface TimelineEvent {
  type: TimelineType;
  /** The post: the question, the answer, the comment; for `accepted`, the answer the user accepted. */
  id: number;
  question_id: number;
  question_title: string;
  question_slug: string;
  created_at: string;
}

// The kinds as numbers, so that two events at the same instant still have one order (kind, then id).
const KIND = { question: 1, answer: 2, comment: 3, accepted: 4 } as const;

const TIMELINE_ORDER: SeekOrder = {
  direction: 'desc',
  keys: [
    { expr: sql`t.at`, type: 'timestamptz' },
    { expr: sql`t.kind`, type: 'int' },
    { expr: sql`t.id`, type: 'int' },
  ],
};

/** The events of one user, each branch read from that user's index of its table (migration 0011). */
const timelineOf = (userId: number) => sql`(
  SELECT q.created_at AS at, ${sql.raw(String(KIND.question))} AS kind, q.id, q.id AS question_id FROM questions q WHERE q.author_id = ${userId}
  UNION ALL
  SELECT a.created_at, ${sql.raw(String(KIND.answer))}, a.id, a.question_id FROM answers a WHERE a.author_id = ${userId}
  UNION ALL
  SELECT c.created_at, ${sql.raw(String(KIND.comment))}, c.id, coalesce(c.question_id, ca.question_id)
    FROM comments c LEFT JOIN answers ca ON ca.id = c.answer_id WHERE c.author_id = ${userId}
  UNION ALL
  SELECT a.accepted_at, ${sql.raw(String(KIND.accepted))}, a.id, q.id
    FROM questions q JOIN answers a ON a.question_id = q.id AND a.is_accepted
    WHERE q.author_id = ${userId} AND a.accepted_at IS NOT NULL
) t`;

const TYPE_OF = Object.fromEntries(Object.entries(KIND).map(([type, n]) => [n, type])) as Record<
  number,
  TimelineType
>;

export function userActivityRepository(db: Db) {
  return {
    /**
     * The tags of a user's answers and questions (every one of their posts is read: the cost is the user's activity,
     * not the site's), best answer score first (or most answers, with `count`), then tag id.
     */
    async tags(userId: number, sort: UserTagSort, limit: number): Promise<UserTag[]> {
      const order =
        sort === 'score'
          ? sql`answer_score DESC, answer_count DESC, t.id ASC`
          : sql`answer_count DESC, answer_score DESC, t.id ASC`;
      return rows<UserTag>(
        db,
        sql`SELECT t.name, t.slug, sum(p.answer_score)::int AS answer_score, sum(p.answer_count)::int AS answer_count,
                   sum(p.question_score)::int AS question_score, sum(p.question_count)::int AS question_count
            FROM (
              SELECT qt.tag_id, a.votes AS answer_score, 1 AS answer_count, 0 AS question_score, 0 AS question_count
                FROM answers a JOIN question_tags qt ON qt.question_id = a.question_id WHERE a.author_id = ${userId}
              UNION ALL
              SELECT qt.tag_id, 0, 0, q.votes, 1
                FROM questions q JOIN question_tags qt ON qt.question_id = q.id WHERE q.author_id = ${userId}
            ) p JOIN tags t ON t.id = p.tag_id
            GROUP BY t.id ORDER BY ${order} LIMIT ${limit}`,
      );
    },

    /** One page of the user's timeline, newest first, by cursor only (no total: the client walks with next_cursor). */
    async timeline(
      userId: number,
      params: { limit: number; cursor?: string },
    ): Promise<{ events: TimelineEvent[]; next_cursor: string | null }> {
      const { items, pagination } = await seekPage<{
        kind: number;
        id: number;
        question_id: number;
        created_at: string;
      }>(
        db,
        {
          list: JSON.stringify(['timeline', userId]),
          columns: sql`t.kind, t.id, t.question_id, ${iso(sql`t.at`)} AS created_at`,
          from: timelineOf(userId),
          where: sql`true`,
          order: TIMELINE_ORDER,
          // No count: every page is read from the top or from the cursor, one row more telling whether more follow.
          total: Number.MAX_SAFE_INTEGER,
          bounded: true,
        },
        { page: 1, limit: params.limit, cursor: params.cursor },
      );
      const ids = [...new Set(items.map((e) => e.question_id))];
      const questions = new Map(
        (ids.length === 0
          ? []
          : await rows<{ id: number; title: string; slug: string }>(
              db,
              sql`SELECT id, title, slug FROM questions WHERE id = ANY(${`{${ids.join(',')}}`}::int[])`,
            )
        ).map((q) => [q.id, q]),
      );
      return {
        events: items.map((e) => {
          const question = questions.get(e.question_id);
          return {
            type: TYPE_OF[e.kind]!,
            id: e.id,
            question_id: e.question_id,
            question_title: question?.title ?? '',
            question_slug: question?.slug ?? '',
            created_at: e.created_at,
          };
        }),
        next_cursor: pagination.next_cursor,
      };
    },
  };
}
