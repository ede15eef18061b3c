import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { iso, markdownOf, rows } from './pagination.js';

export interface CommentView {
  id: number;
  content: string;
  content_markdown?: string;
  votes: number;
  author: { id: number; username: string };
  created_at: string;
}

interface CommentRow {
  id: number;
  content: string;
  content_markdown: string | null;
  votes: number;
  created_at: string;
  author_id: number;
  author_username: string;
  answer_id: number | null;
}

const toView = (r: CommentRow): CommentView => ({
  id: r.id,
  content: r.content,
  ...markdownOf(r.content_markdown),
  votes: r.votes,
  author: { id: r.author_id, username: r.author_username },
  created_at: r.created_at,
});

const COLUMNS = sql`c.id, c.content, c.content_markdown, c.votes, ${iso(sql`c.created_at`)} AS created_at, c.answer_id,
  u.id AS author_id, u.username AS author_username`;

/** Comments read oldest first, as a conversation reads. */
export function commentsRepository(db: Db) {
  return {
    async forQuestion(questionId: number): Promise<CommentView[]> {
      const found = await rows<CommentRow>(
        db,
        sql`SELECT ${COLUMNS} FROM comments c JOIN users u ON u.id = c.author_id
            WHERE c.question_id = ${questionId} ORDER BY c.created_at ASC, c.id ASC`,
      );
      return found.map(toView);
    },

    /** The comments of all the given answers in one query, grouped by answer id (every id has an entry). */
    async forAnswers(answerIds: number[]): Promise<Map<number, CommentView[]>> {
      const grouped = new Map<number, CommentView[]>(answerIds.map((id) => [id, []]));
      if (answerIds.length === 0) return grouped;
      const found = await rows<CommentRow>(
        db,
        sql`SELECT ${COLUMNS} FROM comments c JOIN users u ON u.id = c.author_id
            WHERE c.answer_id = ANY(${`{${answerIds.join(',')}}`}::int[]) ORDER BY c.answer_id, c.created_at ASC, c.id ASC`,
      );
      for (const row of found) grouped.get(row.answer_id!)?.push(toView(row));
      return grouped;
    },
  };
}
