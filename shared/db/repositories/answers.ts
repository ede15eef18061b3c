import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { iso, markdownOf, rows } from './pagination.js';

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

// votes: the accepted answer first, then the best voted, then the oldest (as Stack Exchange shows a question).
const ORDER: Record<AnswerSort, SQL> = {
  votes: sql`a.is_accepted DESC, a.votes DESC, a.created_at ASC, a.id ASC`,
  newest: sql`a.created_at DESC, a.id DESC`,
  oldest: sql`a.created_at ASC, a.id ASC`,
};

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
    /** Every answer of a question (the spec's endpoint is not paginated), in one query with the authors. */
    async listForQuestion(questionId: number, sort: AnswerSort): Promise<AnswerView[]> {
      const found = await rows<AnswerRow>(
        db,
        sql`SELECT a.id, a.content, a.content_markdown, a.votes, a.is_accepted, ${iso(sql`a.created_at`)} AS created_at,
                   u.id AS author_id, u.username AS author_username
            FROM answers a JOIN users u ON u.id = a.author_id
            WHERE a.question_id = ${questionId}
            ORDER BY ${ORDER[sort]}`,
      );
      return found.map(toView);
    },
  };
}
