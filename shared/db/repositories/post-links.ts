import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { MAX_INT4, rows } from './pagination.js';
import { SUMMARY_COLUMNS, toSummary, type QuestionSummary, type SummaryRow } from './question-summaries.js';
import { seekPage, type PaginationWithCursor, type SeekOrder, type SeekParams } from './seek.js';

/** Links between questions (migration 0012): from post bodies at write time, from PostLinks.xml on import. */

const LINKS_LOCK_CLASS = 0x504c; // "PL"

// Duplicates first, then newest id first: (duplicate as 0/1, id), both descending.
const LINKED_ORDER: SeekOrder = {
  direction: 'desc',
  keys: [
    { expr: sql`l.dup`, type: 'int' },
    { expr: sql`q.id`, type: 'int' },
  ],
};

export interface LinkedQuestion extends QuestionSummary {
  /** outgoing: this question links to it; incoming: it links to this question; both. */
  direction: 'outgoing' | 'incoming' | 'both';
  /** A duplicate link (a dump's LinkTypeId 3): outgoing, this question is a duplicate of it; incoming, the reverse. */
  is_duplicate: boolean;
}

export function postLinksRepository(db: Db) {
  return {
    /**
     * Makes the question's body links those found now in its body and its answers' bodies (by `pattern`, a
     * PostgreSQL regular expression whose first group is a question id; shared/qa/links.ts). Links to unknown
     * questions or to itself are dropped. Runs in the write's transaction, after the post was written.
     */
    async refreshBodyLinks(questionId: number, pattern: string): Promise<void> {
      // Writers of one question's posts refresh its links one at a time, each statement after the previous one's
      // commit, so a refresh never works from a snapshot that misses another's committed body. Taken after every
      // row lock of the write, and followed by none that could wait on another writer: no lock cycle.
      await db.execute(sql`SELECT pg_advisory_xact_lock(${LINKS_LOCK_CLASS}, ${questionId})`);
      await db.execute(sql`
        WITH found AS (
          SELECT DISTINCT m[1]::bigint AS target
          FROM (
            SELECT content FROM questions WHERE id = ${questionId}
            UNION ALL SELECT content FROM answers WHERE question_id = ${questionId}
          ) posts, regexp_matches(posts.content, ${pattern}, 'g') AS m
        ), valid AS (
          SELECT q.id FROM found JOIN questions q ON q.id = found.target
          WHERE found.target <= ${MAX_INT4} AND found.target <> ${questionId}
        ), removed AS (
          DELETE FROM post_links
          WHERE question_id = ${questionId} AND source = 'body' AND related_question_id NOT IN (SELECT id FROM valid)
        )
        INSERT INTO post_links (question_id, related_question_id, source)
        SELECT ${questionId}, id, 'body' FROM valid
        ON CONFLICT DO NOTHING`);
    },

    /**
     * Questions linked to or from `questionId`, duplicates first, then newest id first, by cursor or page number
     * (seek.ts): the key is (duplicate, id), unique per linked question.
     */
    async linked(
      questionId: number,
      params: SeekParams,
    ): Promise<{ questions: LinkedQuestion[]; pagination: PaginationWithCursor }> {
      const links = sql`
        SELECT id, CASE WHEN bool_or(outgoing) AND bool_or(NOT outgoing) THEN 'both'
                        WHEN bool_or(outgoing) THEN 'outgoing' ELSE 'incoming' END AS direction,
               bool_or(kind = 'duplicate') AS is_duplicate, bool_or(kind = 'duplicate')::int AS dup
        FROM (
          SELECT related_question_id AS id, true AS outgoing, kind FROM post_links WHERE question_id = ${questionId}
          UNION ALL
          SELECT question_id, false, kind FROM post_links WHERE related_question_id = ${questionId}
        ) l GROUP BY id`;
      const [count] = await rows<{ n: number }>(
        db,
        sql`SELECT count(*)::int AS n FROM (${links}) l JOIN questions q ON q.id = l.id`,
      );
      const { items, pagination } = await seekPage<
        SummaryRow & { direction: LinkedQuestion['direction']; is_duplicate: boolean }
      >(
        db,
        {
          list: JSON.stringify(['linked', questionId]),
          columns: sql`${SUMMARY_COLUMNS}, l.direction, l.is_duplicate`,
          from: sql`(${links}) l JOIN questions q ON q.id = l.id`,
          where: sql`true`,
          order: LINKED_ORDER,
          total: count!.n,
        },
        params,
      );
      return {
        questions: items.map((r) => ({
          ...toSummary(r),
          direction: r.direction,
          is_duplicate: Boolean(r.is_duplicate),
        })),
        pagination,
      };
    },
  };
}
