import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { preparedQuery } from '../prepared.js';
import { iso, rows } from './pagination.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { keyValue } from './seek.js';
import { inIdSet, type IdSet } from './id-set.js';
import { badgeAwardsRepository, type BadgeClass } from './badge-awards.js';

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

export const TIMELINE_TYPES = ['question', 'answer', 'comment', 'accepted', 'badge'] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

export interface TimelineEvent {
  type: TimelineType;
  /** The user whose event it is (for `accepted`, the asker). */
  user_id: number;
  /** The question, the answer, the comment; for `accepted`, the answer the user accepted; for `badge`, the award. */
  id: number;
  /** The question of the post; for a badge, of the post it was earned for, null when it names none. */
  question_id: number | null;
  question_title: string | null;
  question_slug: string | null;
  /** For `badge` only: which badge. */
  badge?: { name: string; class: BadgeClass; tag_based: boolean };
  created_at: string;
}

// The kinds as numbers, so that two events at the same instant still have one order (kind, then id).
const KIND = { question: 1, answer: 2, comment: 3, accepted: 4, badge: 5 } as const;

/** Where a timeline page starts: before the last shown event's (time, kind, id), or at the top. */
interface TimelineSeek {
  at: SQL;
  kind: SQL;
  id: SQL;
}

/**
 * One kind of event of the users, newest first, at most `take` of them from the seek position: for one user each
 * branch is a range of that user's date index of its table (migrations 0011, 0014), `at <= last time` bounding the
 * scan and the row comparison placing it exactly, so a page costs the same at any depth of any user's history.
 */
function branch(kind: number, at: SQL, id: SQL, body: SQL, seek: TimelineSeek | undefined, take: number) {
  const k = sql.raw(String(kind));
  const after = seek
    ? sql`AND ${at} <= ${seek.at} AND (${at}, ${k}, ${id}) < (${seek.at}, ${seek.kind}, ${seek.id})`
    : sql``;
  return sql`(SELECT ${at} AS at, ${k} AS kind, ${id} AS id, question_id, user_id FROM ${body} ${after}
              ORDER BY ${at} DESC NULLS LAST, ${id} DESC NULLS LAST LIMIT ${take})`;
}

// One user is a plain equality (an index range in date order); several are ANY (id-set.ts).
const ofUsers = inIdSet;

const timelineOf = (userIds: IdSet, seek: TimelineSeek | undefined, take: number) =>
  sql.join(
    [
      branch(
        KIND.question,
        sql`q.created_at`,
        sql`q.id`,
        sql`(SELECT *, id AS question_id, author_id AS user_id FROM questions) q WHERE ${ofUsers(sql`q.author_id`, userIds)}`,
        seek,
        take,
      ),
      branch(
        KIND.answer,
        sql`a.created_at`,
        sql`a.id`,
        sql`(SELECT *, author_id AS user_id FROM answers) a WHERE ${ofUsers(sql`a.author_id`, userIds)}`,
        seek,
        take,
      ),
      branch(
        KIND.comment,
        sql`c.created_at`,
        sql`c.id`,
        sql`(SELECT c.id, c.author_id, c.author_id AS user_id, c.created_at, coalesce(c.question_id, ca.question_id) AS question_id
             FROM comments c LEFT JOIN answers ca ON ca.id = c.answer_id) c WHERE ${ofUsers(sql`c.author_id`, userIds)}`,
        seek,
        take,
      ),
      // The accepted answer and its time are kept on the question (migration 0037), in the order of this branch.
      branch(
        KIND.accepted,
        sql`q.accepted_at`,
        sql`q.accepted_answer_id`,
        sql`(SELECT author_id, accepted_at, accepted_answer_id, id AS question_id, author_id AS user_id FROM questions) q
             WHERE ${ofUsers(sql`q.author_id`, userIds)} AND q.accepted_at IS NOT NULL`,
        seek,
        take,
      ),
      // A badge's question: the post it names, a question or an answer's question (imported ids are the dump's,
      // which the two share without overlap); none when it names no post here.
      branch(
        KIND.badge,
        sql`b.awarded_at`,
        sql`b.id`,
        sql`(SELECT b.*, coalesce((SELECT pq.id FROM questions pq WHERE pq.id = b.post_id),
                                  (SELECT pa.question_id FROM answers pa WHERE pa.id = b.post_id)) AS question_id
             FROM badge_awards b) b WHERE ${ofUsers(sql`b.user_id`, userIds)}`,
        seek,
        take,
      ),
    ],
    sql` UNION ALL `,
  );

const TYPE_OF = Object.fromEntries(Object.entries(KIND).map(([type, n]) => [n, type])) as Record<
  number,
  TimelineType
>;

export function userActivityRepository(db: Db) {
  const badges = badgeAwardsRepository(db);
  return {
    /**
     * The tags of a user's answers and questions (every one of their posts is read: the cost is the user's activity,
     * not the site's), best answer score first (or most answers, with `count`), then tag id.
     */
    async tags(userId: IdSet, sort: UserTagSort, limit: number): Promise<UserTag[]> {
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
                FROM answers a JOIN question_tags qt ON qt.question_id = a.question_id WHERE ${inIdSet(sql`a.author_id`, userId)}
              UNION ALL
              SELECT qt.tag_id, 0, 0, q.votes, 1
                FROM questions q JOIN question_tags qt ON qt.question_id = q.id WHERE ${inIdSet(sql`q.author_id`, userId)}
            ) p JOIN tags t ON t.id = p.tag_id
            GROUP BY t.id ORDER BY ${order} LIMIT ${limit}`,
      );
    },

    /**
     * One page of the timeline of one user (or of several, merged), newest first, by cursor only (no total: the
     * client walks with next_cursor).
     */
    async timeline(
      userIds: IdSet,
      params: { limit: number; cursor?: string },
    ): Promise<{ events: TimelineEvent[]; next_cursor: string | null; has_more: boolean }> {
      const list = JSON.stringify(['timeline', userIds]);
      const from = params.cursor === undefined ? undefined : decodeCursor(params.cursor, list, 3);
      const seek = from && {
        at: keyValue('timestamptz', from.key[0]!),
        kind: keyValue('int', from.key[1]!),
        id: keyValue('int', from.key[2]!),
      };
      // One row more than the page says whether a next page exists.
      const take = params.limit + 1;
      // Each branch walks one index of the users' posts by date, whoever they are: the generic plan is as good as
      // one planned for the user (measured for a user with 9,600 posts and one with 5), so PostgreSQL may keep it.
      const found = await preparedQuery<{
        kind: number;
        id: number;
        user_id: number;
        question_id: number | null;
        created_at: string;
        key_at: string;
      }>(
        db,
        sql`SELECT t.kind, t.id, t.user_id, t.question_id, ${iso(sql`t.at`)} AS created_at,
                   to_char(t.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
            FROM (${timelineOf(userIds, seek, take)}) t
            ORDER BY t.at DESC NULLS LAST, t.kind DESC, t.id DESC LIMIT ${take}`,
        { plans: 'reusable' },
      );
      const items = found.slice(0, params.limit);
      const last = items.at(-1);
      const next =
        found.length > params.limit && last
          ? encodeCursor({ list, key: [last.key_at, last.kind, last.id], page: (from?.page ?? 1) + 1 })
          : null;
      const ids = [...new Set(items.flatMap((e) => (e.question_id === null ? [] : [e.question_id])))];
      const questions = new Map(
        (ids.length === 0
          ? []
          : await preparedQuery<{ id: number; title: string; slug: string }>(
              db,
              sql`SELECT id, title, slug FROM questions WHERE id = ANY(${`{${ids.join(',')}}`}::int[])`,
              { plans: 'reusable' },
            )
        ).map((q) => [q.id, q]),
      );
      const awards = await badges.byIds(items.filter((e) => e.kind === KIND.badge).map((e) => e.id));
      return {
        events: items.map((e) => {
          const question = e.question_id === null ? undefined : questions.get(e.question_id);
          const award = e.kind === KIND.badge ? awards.get(e.id) : undefined;
          return {
            type: TYPE_OF[e.kind]!,
            user_id: e.user_id,
            id: e.id,
            question_id: e.question_id,
            question_title: e.question_id === null ? null : (question?.title ?? ''),
            question_slug: e.question_id === null ? null : (question?.slug ?? ''),
            ...(award && { badge: { name: award.name, class: award.class, tag_based: award.tag_based } }),
            created_at: e.created_at,
          };
        }),
        next_cursor: next,
        has_more: next !== null,
      };
    },
  };
}
