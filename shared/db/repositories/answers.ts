import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { iso, markdownOf, rows } from './pagination.js';
import type { KeyType } from './seek.js';
import { windowConditions, type Direction, type WindowParams } from './windows.js';

export const ANSWER_SORTS = ['votes', 'newest', 'oldest'] as const;
export type AnswerSort = (typeof ANSWER_SORTS)[number];

export interface AnswerView {
  id: number;
  content: string;
  content_markdown?: string;
  votes: number;
  is_accepted: boolean;
  author: { id: number; username: string };
  created_at: string;
}

interface AnswerRow {
  id: number;
  content: string;
  content_markdown: string | null;
  votes: number;
  is_accepted: boolean;
  created_at: string;
  author_id: number;
  author_username: string;
}

type Key = [column: string, direction: 'ASC' | 'DESC'];

/**
 * Each sort's keys in its own direction, and the key `min`/`max` bound. votes: the accepted answer first, then the
 * best voted, then the oldest (as Stack Exchange shows a question). `order` opposite to the sort's own reverses every
 * key: `votes&order=asc` is the least voted first and the accepted answer last, the default order read backwards,
 * as `order=asc` reverses /search's ranking.
 */
const ORDER: Record<AnswerSort, { keys: Key[]; direction: Direction; bound: { expr: SQL; type: KeyType } }> =
  {
    votes: {
      keys: [
        ['a.is_accepted', 'DESC'],
        ['a.votes', 'DESC'],
        ['a.created_at', 'ASC'],
        ['a.id', 'ASC'],
      ],
      direction: 'desc',
      bound: { expr: sql`a.votes`, type: 'int' },
    },
    newest: {
      keys: [
        ['a.created_at', 'DESC'],
        ['a.id', 'DESC'],
      ],
      direction: 'desc',
      bound: { expr: sql`a.created_at`, type: 'timestamptz' },
    },
    oldest: {
      keys: [
        ['a.created_at', 'ASC'],
        ['a.id', 'ASC'],
      ],
      direction: 'asc',
      bound: { expr: sql`a.created_at`, type: 'timestamptz' },
    },
  };

function orderBy(sort: AnswerSort, asked: Direction | undefined): SQL {
  const { keys, direction } = ORDER[sort];
  const flip = asked !== undefined && asked !== direction;
  return sql.raw(
    keys.map(([column, dir]) => `${column} ${flip ? (dir === 'ASC' ? 'DESC' : 'ASC') : dir}`).join(', '),
  );
}

const toView = (r: AnswerRow): AnswerView => ({
  id: r.id,
  content: r.content,
  ...markdownOf(r.content_markdown),
  votes: r.votes,
  is_accepted: r.is_accepted,
  author: { id: r.author_id, username: r.author_username },
  created_at: r.created_at,
});

export function answersRepository(db: Db) {
  return {
    /**
     * Every answer of a question (the spec's endpoint is not paginated), in one query with the authors; a window
     * (windows.ts: creation dates, min/max on the sort's key, order) keeps those within it. A question's answers are
     * few, read by the (question_id, …) index and sorted in memory, so any order costs the same.
     */
    async listForQuestion(
      questionId: number,
      sort: AnswerSort,
      window: WindowParams = {},
    ): Promise<AnswerView[]> {
      const conditions = [
        sql`a.question_id = ${questionId}`,
        ...windowConditions(window, sql`a.created_at`, ORDER[sort].bound),
      ];
      const found = await rows<AnswerRow>(
        db,
        sql`SELECT a.id, a.content, a.content_markdown, a.votes, a.is_accepted, ${iso(sql`a.created_at`)} AS created_at,
                   u.id AS author_id, u.username AS author_username
            FROM answers a JOIN users u ON u.id = a.author_id
            WHERE ${sql.join(conditions, sql` AND `)}
            ORDER BY ${orderBy(sort, window.order)}`,
      );
      return found.map(toView);
    },
  };
}
