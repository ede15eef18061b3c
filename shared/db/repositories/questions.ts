import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import {
  iso,
  markdownOf,
  MAX_INT4,
  offsetOf,
  paginate,
  rows,
  type PageParams,
  type Pagination,
} from './pagination.js';

export const QUESTION_SORTS = ['newest', 'votes', 'views', 'unanswered'] as const;
export type QuestionSort = (typeof QUESTION_SORTS)[number];

export interface QuestionListParams extends PageParams {
  sort: QuestionSort;
  /** A tag slug. */
  tag?: string;
  /** A category id. */
  category?: number;
}

export interface QuestionView {
  id: number;
  title: string;
  slug: string;
  content: string;
  content_markdown?: string;
  votes: number;
  views: number;
  answers_count: number;
  has_accepted: boolean;
  author: { id: number; username: string; avatar: string };
  tags: string[];
  created_at: string;
}

/** A row as selected by COLUMNS: the view's fields, with the author flattened and tags as stored. */
type QuestionRow = Omit<QuestionView, 'author' | 'tags' | 'content_markdown'> & {
  content_markdown: string | null;
  tag_names: string[];
  author_id: number;
  author_username: string;
  author_avatar: string;
};

// NULLS LAST as in the indexes (drizzle's .desc()): without it PostgreSQL cannot walk them in order and sorts.
// Every order ends with id desc so that equal keys still have one order and consecutive pages never overlap.
// Each matches an index of shared/db/schema/qa.ts (newest, votes, views, the unanswered partial index).
const ORDER: Record<QuestionSort, SQL> = {
  newest: sql`q.created_at DESC NULLS LAST, q.id DESC NULLS LAST`,
  votes: sql`q.votes DESC NULLS LAST, q.id DESC NULLS LAST`,
  views: sql`q.views DESC NULLS LAST, q.id DESC NULLS LAST`,
  unanswered: sql`q.created_at DESC NULLS LAST, q.id DESC NULLS LAST`,
};

const toView = (r: QuestionRow): QuestionView => ({
  id: r.id,
  title: r.title,
  slug: r.slug,
  content: r.content,
  ...markdownOf(r.content_markdown),
  votes: r.votes,
  views: r.views,
  answers_count: r.answers_count,
  has_accepted: r.has_accepted,
  author: { id: r.author_id, username: r.author_username, avatar: r.author_avatar },
  tags: r.tag_names,
  created_at: r.created_at,
});

/** The Question columns with its author, from `q` joined to `u`; tags come from the denormalised tag_names. */
const COLUMNS = sql`q.id, q.title, q.slug, q.content, q.content_markdown, q.votes, q.views, q.answers_count, q.has_accepted, q.tag_names,
  ${iso(sql`q.created_at`)} AS created_at, u.id AS author_id, u.username AS author_username, u.avatar AS author_avatar`;

export function questionsRepository(db: Db) {
  /** The total for the filters, from a maintained counter when one filter alone has one. */
  async function total(where: SQL | undefined, counter: number | undefined): Promise<number> {
    if (counter !== undefined) return counter;
    // Unfiltered: the categories' maintained counters plus the uncategorised questions (an index range), in one
    // statement so in one snapshot; exact, and far cheaper than counting every question.
    const statement = where
      ? sql`SELECT count(*)::int AS n FROM questions q WHERE ${where}`
      : sql`SELECT ((SELECT coalesce(sum(questions_count), 0) FROM categories)
                    + (SELECT count(*) FROM questions WHERE category_id IS NULL))::int AS n`;
    const [row] = await rows<{ n: number }>(db, statement);
    return row?.n ?? 0;
  }

  return {
    /**
     * One page of questions with exact totals. The page's ids are found first on an index (a deferred join), so a
     * deep page walks index entries rather than whole rows, and only the page's rows are read and joined to their
     * authors.
     */
    async list(params: QuestionListParams): Promise<{ questions: QuestionView[]; pagination: Pagination }> {
      const conditions: SQL[] = [];
      let counter: number | undefined;
      const unanswered = params.sort === 'unanswered';
      if (unanswered) conditions.push(sql`q.answers_count = 0`);

      if (params.tag !== undefined) {
        const [tag] = await rows<{ id: number; questions_count: number }>(
          db,
          sql`SELECT id, questions_count FROM tags WHERE slug = ${params.tag}`,
        );
        if (!tag) return { questions: [], pagination: paginate(params, 0) };
        conditions.push(
          sql`EXISTS (SELECT 1 FROM question_tags qt WHERE qt.tag_id = ${tag.id} AND qt.question_id = q.id)`,
        );
        counter = tag.questions_count;
      }
      if (params.category !== undefined) {
        if (params.category > MAX_INT4) return { questions: [], pagination: paginate(params, 0) };
        const [category] = await rows<{ questions_count: number }>(
          db,
          sql`SELECT questions_count FROM categories WHERE id = ${params.category}`,
        );
        if (!category) return { questions: [], pagination: paginate(params, 0) };
        conditions.push(sql`q.category_id = ${params.category}`);
        counter = counter === undefined ? category.questions_count : undefined;
      }
      if (unanswered) counter = undefined;
      if (params.tag !== undefined && params.category !== undefined) counter = undefined;

      const where = conditions.length > 0 ? sql.join(conditions, sql` AND `) : sql`true`;
      const order = ORDER[params.sort];
      const [found, count] = await Promise.all([
        rows<QuestionRow>(
          db,
          sql`WITH page AS (
                SELECT q.id FROM questions q WHERE ${where} ORDER BY ${order} LIMIT ${params.limit} OFFSET ${offsetOf(params)}
              )
              SELECT ${COLUMNS} FROM page JOIN questions q ON q.id = page.id JOIN users u ON u.id = q.author_id
              ORDER BY ${order}`,
        ),
        total(conditions.length > 0 ? where : undefined, counter),
      ]);
      return { questions: found.map(toView), pagination: paginate(params, count) };
    },

    /**
     * A question by id or slug. A key made of digits is an id first; a question whose slug is all digits (a title
     * like "2024") is still found by its slug when no question has that id.
     */
    async find(key: string): Promise<QuestionView | undefined> {
      const id = /^[0-9]{1,10}$/.test(key) ? Number(key) : undefined;
      const byId = id !== undefined && id >= 1 && id <= MAX_INT4;
      const [row] = await rows<QuestionRow>(
        db,
        byId
          ? sql`SELECT ${COLUMNS} FROM questions q JOIN users u ON u.id = q.author_id
                WHERE q.id = ${id} OR q.slug = ${key} ORDER BY (q.id = ${id}) DESC LIMIT 1`
          : sql`SELECT ${COLUMNS} FROM questions q JOIN users u ON u.id = q.author_id WHERE q.slug = ${key}`,
      );
      return row ? toView(row) : undefined;
    },

    /** The id of a question given by id or slug, without reading its body. */
    async resolveId(key: string): Promise<number | undefined> {
      const id = /^[0-9]{1,10}$/.test(key) ? Number(key) : undefined;
      const byId = id !== undefined && id >= 1 && id <= MAX_INT4;
      const [row] = await rows<{ id: number }>(
        db,
        byId
          ? sql`SELECT id FROM questions WHERE id = ${id} OR slug = ${key} ORDER BY (id = ${id}) DESC LIMIT 1`
          : sql`SELECT id FROM questions WHERE slug = ${key}`,
      );
      return row?.id;
    },
  };
}
