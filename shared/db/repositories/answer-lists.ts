import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { isInt4Id } from '../int4.js';
import { preparedQuery } from '../prepared.js';
import { ANSWER_SORTS, type AnswerSort, type AnswerView } from './answers.js';
import { iso, markdownOf, rows } from './pagination.js';
import { listCounter, seekPage, type PaginationWithCursor, type SeekOrder, type SeekParams } from './seek.js';
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

export { ANSWER_SORTS };

/** An answer on its own (GET /answers/{ids}, a user's answers): the Answer with the question it answers. */
export interface AnswerOnQuestion extends AnswerView {
  question_id: number;
  question_title: string;
  question_slug: string;
}

interface Row extends Omit<AnswerOnQuestion, 'author' | 'content_markdown'> {
  content_markdown: string | null;
  author_id: number;
  author_username: string;
}

const COLUMNS = sql`a.id, a.content, a.content_markdown, a.votes, a.is_accepted, ${iso(sql`a.created_at`)} AS created_at,
  u.id AS author_id, u.username AS author_username, q.id AS question_id, q.title AS question_title, q.slug AS question_slug`;

const toView = (r: Row): AnswerOnQuestion => ({
  id: r.id,
  content: r.content,
  ...markdownOf(r.content_markdown),
  votes: r.votes,
  is_accepted: r.is_accepted,
  author: { id: r.author_id, username: r.author_username },
  created_at: r.created_at,
  question_id: r.question_id,
  question_title: r.question_title,
  question_slug: r.question_slug,
});

// Each order is an index on answers, by author (migration 0011) or the site's (by date 0011, by votes 0025); oldest
// walks newest's backwards.
const BY_DATE: SeekOrder = {
  direction: 'desc',
  keys: [
    { expr: sql`a.created_at`, type: 'timestamptz' },
    { expr: sql`a.id`, type: 'int' },
  ],
};
const BY_VOTES: SeekOrder = {
  direction: 'desc',
  keys: [
    { expr: sql`a.votes`, type: 'int' },
    { expr: sql`a.id`, type: 'int' },
  ],
};

export interface UserAnswersParams extends SeekParams, WindowParams {
  sort: AnswerSort;
}

/** GET /answers: every answer of the site, with the same parameters. */
export type AnswerListParams = UserAnswersParams;

export function answerListsRepository(db: Db) {
  /** The answers of the given ids, in that order; unknown ids are left out. */
  async function byIds(ids: number[]): Promise<AnswerOnQuestion[]> {
    if (ids.length === 0) return [];
    const found = await preparedQuery<Row>(
      db,
      sql`SELECT ${COLUMNS} FROM unnest(${`{${ids.join(',')}}`}::int[]) WITH ORDINALITY AS page(id, n)
          JOIN answers a ON a.id = page.id JOIN users u ON u.id = a.author_id JOIN questions q ON q.id = a.question_id
          ORDER BY page.n`,
      { plans: 'reusable' },
    );
    return found.map(toView);
  }

  return {
    byIds,

    async exists(id: number): Promise<boolean> {
      if (!isInt4Id(id)) return false;
      return (await rows(db, sql`SELECT 1 FROM answers WHERE id = ${id}`)).length > 0;
    },

    /** A user's answers, paginated by page or cursor; the total is the user's answers_count unless windowed. */
    forUser: (userId: IdSet, params: UserAnswersParams) => list(userId, params),

    /** The site's answers (GET /answers); the total is the `answers` counter (0011) unless windowed. */
    forSite: (params: AnswerListParams) => list(undefined, params),
  };

  async function list(
    userId: IdSet | undefined,
    params: UserAnswersParams,
  ): Promise<{ answers: AnswerOnQuestion[]; pagination: PaginationWithCursor }> {
    const base = params.sort === 'votes' ? BY_VOTES : BY_DATE;
    const order = directed(base, params.order ?? (params.sort === 'oldest' ? 'asc' : 'desc'));
    const conditions: SQL[] = [
      userId === undefined ? sql`true` : inIdSet(sql`a.author_id`, userId),
      ...windowConditions(params, sql`a.created_at`, order.keys[0]!),
    ];
    const from = sql`answers a`;
    const where = sql.join(conditions, sql` AND `);
    const windowed = isWindowed(params);
    const total = windowed
      ? await boundedCount(db, from, where)
      : userId === undefined
        ? listCounter(sql`'answers'`)
        : sql`(SELECT coalesce(sum(answers_count), 0)::int FROM users WHERE ${inIdSet(sql`id`, userId)})`;
    const counted = { bounded: windowed };
    const { items, pagination } = await seekPage<{ id: number }>(
      db,
      {
        // The user's list keeps its name (cursors already handed out stay valid); the site's has its own.
        list: JSON.stringify(
          userId === undefined
            ? ['answers', params.sort, ...windowName(params)]
            : ['user-answers', userId, params.sort, ...windowName(params)],
        ),
        columns: sql`a.id AS id`,
        from,
        where,
        order,
        total,
        bounded: windowed,
        // All the site's answers: by date, the day counters find where a deep page starts; by votes, the value
        // counts do.
        days: userId === undefined && !windowed && params.sort !== 'votes' ? 'answers' : undefined,
        values: userId === undefined && !windowed && params.sort === 'votes' ? 'answers:votes' : undefined,
      },
      params,
    );
    return {
      answers: await byIds(items.map((r) => r.id)),
      pagination: boundedPagination(pagination, counted),
    };
  }
}
