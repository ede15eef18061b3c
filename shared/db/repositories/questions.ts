import { sql } from 'drizzle-orm';
import { ValidationError } from '../../errors.js';
import type { Db } from '../client.js';
import type { JsonText } from '../json-text.js';
import { iso, markdownOf, MAX_INT4, rows } from './pagination.js';
import { preparedQuery } from '../prepared.js';
import { questionJsonRepository } from './question-json.js';
import {
  emptyPagination,
  listCounter,
  seekPage,
  type DayCounted,
  type ValueCounted,
  type PaginationWithCursor,
  type SeekList,
  type SeekOrder,
  type SeekParams,
} from './seek.js';
import { inIdSet, type IdSet } from './id-set.js';
import {
  boundedCount,
  boundedPagination,
  directed,
  isWindowed,
  windowConditions,
  windowName,
  type WindowParams,
} from './windows.js';

export const QUESTION_SORTS = ['newest', 'votes', 'views', 'unanswered'] as const;
export type QuestionSort = (typeof QUESTION_SORTS)[number];

export interface QuestionListParams extends SeekParams, WindowParams {
  sort: QuestionSort;
  /** Tag slugs separated by `;`: questions that have all of them. */
  tag?: string;
  /** A category id. */
  category?: number;
  /** The author's user id, or several authors' (GET /users/{ids}/questions). */
  author?: IdSet;
}

/** At most this many tags in one `tag` filter (as Stack Exchange's `tagged`). */
export const MAX_TAGS = 5;

/** The slugs of a `tag` filter; a 400 for an empty slug or more than MAX_TAGS. */
export function tagSlugs(tag: string): string[] {
  const slugs = tag.split(';');
  if (slugs.length > MAX_TAGS || slugs.some((s) => s.length === 0 || s.length > 100)) {
    throw new ValidationError(`tag must be 1 to ${MAX_TAGS} tag slugs separated by ";", none empty`);
  }
  return slugs;
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

// Every order ends with the id so that equal keys still have one order and consecutive pages never overlap. Each
// matches an index: on questions (newest, votes, views, the unanswered partial index, and the same per category) and,
// for a tag's questions, on question_tags, which carries the question's sort keys (migration 0009).
const KEY_COLUMN: Record<QuestionSort, string> = {
  newest: 'created_at',
  votes: 'votes',
  views: 'views',
  unanswered: 'created_at',
};

/** The sorts whose lists, unfiltered or by category, have posts-per-day counters (seek.ts, dayAnchor). */
function dayCounted(sort: QuestionSort, category: number | undefined): DayCounted | undefined {
  if (sort === 'newest') return category === undefined ? 'questions' : `category:${category}`;
  if (sort === 'unanswered') return category === undefined ? 'unanswered' : `category-unanswered:${category}`;
  return undefined;
}

/** The sorts whose lists, unfiltered or by category, have counts per value (migration 0028; seek.ts, valueAnchor). */
function valueCounted(sort: QuestionSort, category: number | undefined): ValueCounted | undefined {
  if (sort !== 'votes' && sort !== 'views') return undefined;
  return category === undefined ? `questions:${sort}` : `category:${category}:${sort}`;
}

/** A tag's questions by votes or views are counted per value too (migration 0033). */
function tagValueCounted(sort: QuestionSort, tag: number): ValueCounted | undefined {
  return sort === 'votes' || sort === 'views' ? `tag:${tag}:${sort}` : undefined;
}

// One order object per sort and table, built once (seek.ts builds its fragments once per order object).
const ORDERS = new Map<string, SeekOrder>();

function order(sort: QuestionSort, alias: 'q' | 'qt'): SeekOrder {
  const name = `${sort}:${alias}`;
  let found = ORDERS.get(name);
  if (found) return found;
  const column = KEY_COLUMN[sort];
  found = {
    direction: 'desc',
    keys: [
      { expr: sql.raw(`${alias}.${column}`), type: column === 'created_at' ? 'timestamptz' : 'int' },
      { expr: sql.raw(alias === 'q' ? 'q.id' : 'qt.question_id'), type: 'int' },
    ],
  };
  ORDERS.set(name, found);
  return found;
}

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

/** The id a question key names first: digits within int4 (a slug may be all digits too). */
function idOf(key: string): number | undefined {
  if (!/^[0-9]{1,10}$/.test(key)) return undefined;
  const id = Number(key);
  return id >= 1 && id <= MAX_INT4 ? id : undefined;
}

export function questionsRepository(db: Db) {
  const json = questionJsonRepository(db);

  /** The tags named by slug with their totals; undefined when one of them does not exist (the list is then empty). */
  async function tagsOf(slugs: string[]) {
    const found = await rows<{ id: number; total: number; unanswered: number }>(
      db,
      sql`SELECT id, questions_count AS total, ${listCounter(sql`'tag:' || id || ':unanswered'`)} AS unanswered
          FROM tags WHERE slug IN (${sql.join(
            slugs.map((slug) => sql`${slug}`),
            sql`, `,
          )})`,
    );
    return found.length === new Set(slugs).size ? found : undefined;
  }

  /**
   * Where the list's ids come from, its filters and its total; undefined when a filter names nothing. The total is a
   * maintained counter where the list has one, else a count bounded by COUNT_BOUND (windows.ts).
   */
  async function source(params: QuestionListParams): Promise<Omit<SeekList, 'list' | 'columns'> | undefined> {
    const unanswered = params.sort === 'unanswered';
    const windowed = isWindowed(params);
    if (params.category !== undefined) {
      if (params.category > MAX_INT4) return undefined;
      // A category's own lists read its counters in the page's statement (seek.ts); the lists it only narrows check
      // first that it exists, so that a filter naming nothing walks nothing.
      const categoryList = params.tag === undefined && params.author === undefined && !windowed;
      if (!categoryList) {
        const [found] = await rows<{ id: number }>(
          db,
          sql`SELECT id FROM categories WHERE id = ${params.category}`,
        );
        if (!found) return undefined;
      }
    }

    if (params.author === undefined && params.tag !== undefined) {
      const tags = await tagsOf(tagSlugs(params.tag));
      if (!tags) return undefined;
      // The rarest tag's question_tags index gives the questions in the sort's order; the other tags and a category
      // are tests on that walk (the primary keys answer them), so a page costs at most the rarest tag's size.
      const [walk, ...others] = [...tags].sort((a, b) => a.total - b.total || a.id - b.id);
      const ordered = directed(order(params.sort, 'qt'), params.order);
      const conditions = [sql`qt.tag_id = ${walk!.id}`];
      for (const other of others) {
        conditions.push(
          sql`EXISTS (SELECT 1 FROM question_tags o WHERE o.tag_id = ${other.id} AND o.question_id = qt.question_id)`,
        );
      }
      if (unanswered) conditions.push(sql`qt.answers_count = 0`);
      conditions.push(...windowConditions(params, sql`qt.created_at`, ordered.keys[0]!));
      const from =
        params.category !== undefined
          ? sql`question_tags qt JOIN questions q ON q.id = qt.question_id`
          : sql`question_tags qt`;
      if (params.category !== undefined) conditions.push(sql`q.category_id = ${params.category}`);
      const where = sql.join(conditions, sql` AND `);
      if (params.category === undefined && others.length === 0 && !windowed) {
        const total = unanswered ? walk!.unanswered : walk!.total;
        return { from, where, order: ordered, total, values: tagValueCounted(params.sort, walk!.id) };
      }
      return { from, where, order: ordered, total: await boundedCount(db, from, where), bounded: true };
    }

    const ordered = directed(order(params.sort, 'q'), params.order);
    const conditions = [sql`true`];
    if (unanswered) conditions.push(sql`q.answers_count = 0`);
    if (params.category !== undefined) conditions.push(sql`q.category_id = ${params.category}`);
    if (params.author !== undefined) conditions.push(inIdSet(sql`q.author_id`, params.author));
    if (params.author !== undefined && params.tag !== undefined) {
      const tags = await tagsOf(tagSlugs(params.tag));
      if (!tags) return undefined;
      for (const tag of tags) {
        conditions.push(
          sql`EXISTS (SELECT 1 FROM question_tags o WHERE o.tag_id = ${tag.id} AND o.question_id = q.id)`,
        );
      }
    }
    conditions.push(...windowConditions(params, sql`q.created_at`, ordered.keys[0]!));
    const from = sql`questions q`;
    const where = sql.join(conditions, sql` AND `);
    if (windowed || params.author !== undefined) {
      const author = params.author;
      const own = !windowed && !unanswered && params.category === undefined && !params.tag;
      if (author !== undefined && own) {
        const total = sql`(SELECT coalesce(sum(questions_count), 0)::int FROM users WHERE ${inIdSet(sql`id`, author)})`;
        return { from, where, order: ordered, total };
      }
      return { from, where, order: ordered, total: await boundedCount(db, from, where), bounded: true };
    }
    const total =
      params.category === undefined
        ? listCounter(sql`${unanswered ? 'questions:unanswered' : 'questions'}::text`)
        : unanswered
          ? listCounter(sql`${`category:${params.category}:unanswered`}::text`)
          : sql`coalesce((SELECT questions_count FROM categories WHERE id = ${params.category}), 0)::int`;
    // All the questions, or all the unanswered ones, by date: the day counters find where a deep page starts; all
    // the questions or a category's by votes or views: the value counts do.
    const days = dayCounted(params.sort, params.category);
    const values = valueCounted(params.sort, params.category);
    return { from, where, order: ordered, total, days, values };
  }

  return {
    /**
     * One page of questions with exact totals (maintained counters), by page number or by cursor (lib: seek.ts).
     * The page's ids are found on an index by a statement planned for the list's values; then only the page's rows
     * are read, joined to their authors and rendered as JSON by PostgreSQL (question-json.ts), by a statement of its
     * own on reusable plans: planning the join, over a table with many indexes, cost PostgreSQL more than running it,
     * and the page's own statement plans in a tenth of the time alone. A question deleted between the two is left out.
     */
    async list(
      params: QuestionListParams,
    ): Promise<{ questions: JsonText; pagination: PaginationWithCursor }> {
      const found = await source(params);
      if (!found) return { questions: await json.page([]), pagination: emptyPagination(params) };
      // The lists of before windows keep their names, so cursors they issued stay valid.
      const extra =
        params.author !== undefined || isWindowed(params) || params.order
          ? [params.author ?? null, ...windowName(params)]
          : [];
      const list = JSON.stringify([
        'questions',
        params.sort,
        params.tag ?? null,
        params.category ?? null,
        ...extra,
      ]);
      const id = found.order.keys.at(-1)!.expr;
      const { items, pagination } = await seekPage<{ id: number }>(
        db,
        { list, columns: sql`${id} AS id`, ...found },
        params,
      );
      return {
        questions: await json.page(items.map((r) => r.id)),
        pagination: boundedPagination(pagination, found),
      };
    },

    /** The questions of the given ids as a JSON array, in that order; unknown ids are left out. */
    findMany: (ids: number[]) => json.page(ids.filter((id) => id >= 1 && id <= MAX_INT4)),

    /**
     * A question's detail as JSON (question-json.ts), by id or slug as find() resolves them, with its answers and
     * comments when asked for.
     */
    detail: (key: string, include: { answers: boolean; comments: boolean }) =>
      json.detail(idOf(key) ?? null, key, include),

    /**
     * A question by id or slug. A key made of digits is an id first; a question whose slug is all digits (a title
     * like "2024") is still found by its slug when no question has that id.
     */
    async find(key: string): Promise<QuestionView | undefined> {
      const id = idOf(key);
      const [row] = await preparedQuery<QuestionRow>(
        db,
        id !== undefined
          ? sql`SELECT ${COLUMNS} FROM questions q JOIN users u ON u.id = q.author_id
                WHERE q.id = ${id} OR q.slug = ${key} ORDER BY (q.id = ${id}) DESC LIMIT 1`
          : sql`SELECT ${COLUMNS} FROM questions q JOIN users u ON u.id = q.author_id WHERE q.slug = ${key}`,
        { plans: 'reusable' },
      );
      return row ? toView(row) : undefined;
    },

    /** The id of a question given by id or slug, without reading its body. */
    async resolveId(key: string): Promise<number | undefined> {
      const id = idOf(key);
      const [row] = await preparedQuery<{ id: number }>(
        db,
        id !== undefined
          ? sql`SELECT id FROM questions WHERE id = ${id} OR slug = ${key} ORDER BY (id = ${id}) DESC LIMIT 1`
          : sql`SELECT id FROM questions WHERE slug = ${key}`,
        { plans: 'reusable' },
      );
      return row?.id;
    },
  };
}
