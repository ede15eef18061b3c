import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import type { AnswerView } from './answers.js';
import type { CommentView } from './comment-lists.js';
import type { RenderedPost } from '../../qa/content.js';
import { isInt4Id } from '../int4.js';
import { iso, markdownOf, rows } from './pagination.js';

/**
 * The SQL of asking, answering, commenting, editing and accepting. Counters (answers_count, has_accepted,
 * questions_count, tag counts, tag_names) follow from the rows by the triggers of migration 0002.
 *
 * Lock order, the same in every write transaction so that they cannot deadlock: the question row, then its
 * answer rows, then user rows in ascending id (reputationRepository). Row locks are FOR NO KEY UPDATE, which
 * do not block the foreign-key checks of concurrent inserts (FOR KEY SHARE).
 */

export interface LockedQuestion {
  id: number;
  authorId: number;
}

export interface LockedAnswer {
  id: number;
  questionId: number;
  authorId: number;
  isAccepted: boolean;
}

// Key space of pg_advisory_xact_lock(int, int) for "one user posting a question".
const POSTING_LOCK = 0x51_41_50; // "QAP"

const validId = isInt4Id;

export function postWritesRepository(db: Db) {
  return {
    /** Serialises one user's question posts (for the duplicate-title rule) until the transaction ends. */
    async lockAuthorPosting(userId: number): Promise<void> {
      await db.execute(sql`SELECT pg_advisory_xact_lock(${POSTING_LOCK}, ${userId})`);
    },

    async recentTitleExists(userId: number, title: string, seconds: number): Promise<boolean> {
      if (seconds <= 0) return false;
      const found = await rows<{ id: number }>(
        db,
        sql`SELECT id FROM questions WHERE author_id = ${userId} AND lower(title) = lower(${title})
              AND created_at > now() - make_interval(secs => ${seconds}) LIMIT 1`,
      );
      return found.length > 0;
    },

    async categoryExists(id: number): Promise<boolean> {
      if (!validId(id)) return false;
      return (await rows(db, sql`SELECT 1 FROM categories WHERE id = ${id}`)).length > 0;
    },

    async tagsByName(names: string[]): Promise<Array<{ id: number; name: string }>> {
      if (names.length === 0) return [];
      return rows(
        db,
        sql`SELECT id, name FROM tags WHERE name = ANY(${`{${names.map(quoteArrayItem).join(',')}}`}::text[])`,
      );
    },

    async tagSlugsTaken(slugs: string[]): Promise<Array<{ name: string; slug: string }>> {
      if (slugs.length === 0) return [];
      return rows(
        db,
        sql`SELECT name, slug FROM tags WHERE slug = ANY(${`{${slugs.map(quoteArrayItem).join(',')}}`}::text[])`,
      );
    },

    /** Creates the tags that do not exist yet (a concurrent creator of the same tag is not an error). */
    async createTags(tags: Array<{ name: string; slug: string }>): Promise<void> {
      for (const tag of tags) {
        await db.execute(
          sql`INSERT INTO tags (name, slug) VALUES (${tag.name}, ${tag.slug}) ON CONFLICT DO NOTHING`,
        );
      }
    },

    /** Slugs equal to `base` or `base-<n>`, to pick the first free one. */
    async slugsLike(base: string): Promise<string[]> {
      const found = await rows<{ slug: string }>(
        db,
        sql`SELECT slug FROM questions WHERE slug = ${base} OR (slug LIKE ${`${escapeLike(base)}-%`} AND slug ~ ${`^${escapeRegex(base)}-[0-9]+$`})`,
      );
      return found.map((r) => r.slug);
    },

    /** Inserts the question unless its slug was taken meanwhile (then: undefined, pick another slug). */
    async insertQuestion(q: {
      title: string;
      slug: string;
      content: RenderedPost;
      authorId: number;
      categoryId: number | null;
    }) {
      const [row] = await rows<{ id: number }>(
        db,
        sql`INSERT INTO questions (title, slug, content, content_markdown, author_id, category_id)
            VALUES (${q.title}, ${q.slug}, ${q.content.html}, ${q.content.markdown}, ${q.authorId}, ${q.categoryId})
            ON CONFLICT (slug) DO NOTHING RETURNING id`,
      );
      return row?.id;
    },

    async updateQuestion(
      id: number,
      changes: { title?: string; content?: RenderedPost; categoryId?: number | null },
    ) {
      const sets = [sql`updated_at = now()`];
      if (changes.title !== undefined) sets.push(sql`title = ${changes.title}`);
      if (changes.content !== undefined) {
        sets.push(sql`content = ${changes.content.html}, content_markdown = ${changes.content.markdown}`);
      }
      if (changes.categoryId !== undefined) sets.push(sql`category_id = ${changes.categoryId}`);
      await db.execute(sql`UPDATE questions SET ${sql.join(sets, sql`, `)} WHERE id = ${id}`);
    },

    /** Makes the question's tags exactly `tagIds`, in that order for new ones (triggers keep tag_names and counts). */
    async setQuestionTags(questionId: number, tagIds: number[]): Promise<void> {
      const keep = `{${tagIds.join(',')}}`;
      await db.execute(
        sql`DELETE FROM question_tags WHERE question_id = ${questionId} AND NOT (tag_id = ANY(${keep}::int[]))`,
      );
      for (const tagId of tagIds) {
        await db.execute(
          sql`INSERT INTO question_tags (question_id, tag_id) VALUES (${questionId}, ${tagId}) ON CONFLICT DO NOTHING`,
        );
      }
    },

    async lockQuestion(id: number): Promise<LockedQuestion | undefined> {
      if (!validId(id)) return undefined;
      const [row] = await rows<LockedQuestion>(
        db,
        sql`SELECT id, author_id AS "authorId" FROM questions WHERE id = ${id} FOR NO KEY UPDATE`,
      );
      return row;
    },

    async findAnswer(id: number): Promise<LockedAnswer | undefined> {
      if (!validId(id)) return undefined;
      const [row] = await rows<LockedAnswer>(
        db,
        sql`SELECT id, question_id AS "questionId", author_id AS "authorId", is_accepted AS "isAccepted" FROM answers WHERE id = ${id}`,
      );
      return row;
    },

    async lockAnswer(id: number): Promise<LockedAnswer | undefined> {
      if (!validId(id)) return undefined;
      const [row] = await rows<LockedAnswer>(
        db,
        sql`SELECT id, question_id AS "questionId", author_id AS "authorId", is_accepted AS "isAccepted"
            FROM answers WHERE id = ${id} FOR NO KEY UPDATE`,
      );
      return row;
    },

    async lockAcceptedAnswer(questionId: number): Promise<LockedAnswer | undefined> {
      const [row] = await rows<LockedAnswer>(
        db,
        sql`SELECT id, question_id AS "questionId", author_id AS "authorId", is_accepted AS "isAccepted"
            FROM answers WHERE question_id = ${questionId} AND is_accepted FOR NO KEY UPDATE`,
      );
      return row;
    },

    async setAccepted(answerId: number, accepted: boolean): Promise<void> {
      await db.execute(sql`UPDATE answers SET is_accepted = ${accepted} WHERE id = ${answerId}`);
    },

    async insertAnswer(a: { questionId: number; authorId: number; content: RenderedPost }): Promise<number> {
      const [row] = await rows<{ id: number }>(
        db,
        sql`INSERT INTO answers (question_id, author_id, content, content_markdown)
            VALUES (${a.questionId}, ${a.authorId}, ${a.content.html}, ${a.content.markdown}) RETURNING id`,
      );
      return row!.id;
    },

    async updateAnswer(id: number, content: RenderedPost): Promise<void> {
      await db.execute(
        sql`UPDATE answers SET content = ${content.html}, content_markdown = ${content.markdown}, updated_at = now()
            WHERE id = ${id}`,
      );
    },

    async insertComment(c: {
      questionId?: number;
      answerId?: number;
      authorId: number;
      content: RenderedPost;
    }): Promise<number> {
      const [row] = await rows<{ id: number }>(
        db,
        sql`INSERT INTO comments (question_id, answer_id, author_id, content, content_markdown)
            VALUES (${c.questionId ?? null}, ${c.answerId ?? null}, ${c.authorId}, ${c.content.html},
                    ${c.content.markdown}) RETURNING id`,
      );
      return row!.id;
    },

    async questionState(id: number): Promise<{ has_accepted: boolean } | undefined> {
      const [row] = await rows<{ has_accepted: boolean }>(
        db,
        sql`SELECT has_accepted FROM questions WHERE id = ${id}`,
      );
      return row;
    },

    /** An answer in the read shape (GET /questions/{id}/answers). */
    async answerView(id: number): Promise<AnswerView | undefined> {
      const [row] = await rows<
        Omit<AnswerView, 'content_markdown'> & {
          content_markdown: string | null;
          author_id: number;
          author_username: string;
        }
      >(
        db,
        sql`SELECT a.id, a.content, a.content_markdown, a.votes, a.is_accepted, ${iso(sql`a.created_at`)} AS created_at,
                   u.id AS author_id, u.username AS author_username
            FROM answers a JOIN users u ON u.id = a.author_id WHERE a.id = ${id}`,
      );
      if (!row) return undefined;
      const { author_id, author_username, content_markdown, ...answer } = row;
      return {
        ...answer,
        ...markdownOf(content_markdown),
        author: { id: author_id, username: author_username },
      };
    },

    /** A comment in the read shape (include=comments). */
    async commentView(id: number): Promise<CommentView | undefined> {
      const [row] = await rows<
        Omit<CommentView, 'content_markdown'> & {
          content_markdown: string | null;
          author_id: number;
          author_username: string;
        }
      >(
        db,
        sql`SELECT c.id, c.content, c.content_markdown, c.votes, ${iso(sql`c.created_at`)} AS created_at, u.id AS author_id, u.username AS author_username
            FROM comments c JOIN users u ON u.id = c.author_id WHERE c.id = ${id}`,
      );
      if (!row) return undefined;
      const { author_id, author_username, content_markdown, ...comment } = row;
      return {
        ...comment,
        ...markdownOf(content_markdown),
        author: { id: author_id, username: author_username },
      };
    },
  };
}

// A text[] literal item, quoted so commas, braces and quotes in names stay inside the item.
const quoteArrayItem = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
