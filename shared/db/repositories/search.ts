import type { Db } from '../client.js';
import { preparedRows } from '../prepared.js';
import { offsetOf, paginate, type PageParams, type Pagination } from './pagination.js';
import { parseInstant, type Direction } from './windows.js';

export const SEARCH_TYPES = ['questions', 'answers', 'users', 'all'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export interface QuestionHit {
  type: 'question';
  id: number;
  score: number;
  title: string;
  slug: string;
  /** The start of the body's plain text (tags stripped, entities as stored), to cut the excerpt from. */
  text: string;
  votes: number;
  answers_count: number;
  has_accepted: boolean;
  tags: string[];
  created_at: string;
}

export interface AnswerHit {
  type: 'answer';
  id: number;
  score: number;
  question_id: number;
  question_title: string;
  question_slug: string;
  /** As QuestionHit's. */
  text: string;
  votes: number;
  is_accepted: boolean;
  created_at: string;
}

export interface UserHit {
  type: 'user';
  id: number;
  score: number;
  username: string;
  display_name: string;
  avatar: string;
  reputation: number;
}

export type SearchHit = QuestionHit | AnswerHit | UserHit;

/** Search's part of a list's window (windows.ts): the creation dates and the direction; no min/max (no sort key). */
export interface SearchWindow {
  /** Created at or after (inclusive): ISO 8601 or Unix seconds. */
  fromdate?: string;
  /** Created at or before (inclusive). */
  todate?: string;
  /** desc (default): the most relevant first; asc: the least relevant of the candidates first. */
  order?: Direction;
}

/** A search's pagination: `total_bounded` when a kind reached its CANDIDATES (total_items is then a lower bound). */
export type SearchPagination = Pagination & { total_bounded?: true };

/**
 * Scores are comparable across kinds, so `type=all` merges by score: documents use ts_rank_cd normalised into
 * [0, 1) (flag 32: rank / (rank + 1)), answers weighted like a question body; users use their best trigram word
 * similarity halved, so that an exact username (0.5) ranks with a question that has the words once in its title,
 * not above everything.
 */
const USER_WEIGHT = 0.5;
// Answer vectors carry no weights (D); ranking D like a question body (C) makes an answer and a question body that
// say the same thing score the same. Order: {D, C, B, A}; the others are PostgreSQL's defaults.
const ANSWER_WEIGHTS = '{0.2, 0.2, 0.4, 1.0}';
// Excerpts are cut from a bounded prefix of the plain text (shared/qa/excerpt.ts), the part a reader sees first.
const EXCERPT_CHARS = 2000;

/**
 * Each kind ranks at most its CANDIDATES most recent matches (highest ids). Ranking reads every candidate's vector,
 * so without a bound a common word ("temperature" in half the bodies) would rank tens of thousands of rows; with it
 * a search costs the same whatever the word and the size of the site. PostgreSQL picks the plan per query (the
 * tsquery is known when it plans): a common word walks the primary key backwards until it has enough matches, a rare
 * one uses the GIN index. Results past the candidates are not reachable, and total_items counts at most CANDIDATES
 * per kind (ten pages of 20 per kind): walking and ranking candidates is most of a search's cost, so the bound is
 * the price of a search that stays fast on a common word (docs/qa-api.md, Search).
 */
export const CANDIDATES = 200;

// Parameters of every statement: $1 the search text, $2 the page size, $3 the offset; then, when a window is asked,
// its bounds ($4, and $5 when both are). The tsquery is written out in each place rather than computed once, so that
// the planner sees it as a constant (websearch_to_tsquery is immutable) and estimates each word's frequency from the
// statistics.
const TSQ = `websearch_to_tsquery('english', $1::text)`;
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const excerptText = (body: string) => `left(agora_plain_text(${body}), ${EXCERPT_CHARS})`;

/** The placeholders of a window's bounds (`null`: no bound), in the statement's text. */
interface WindowSlots {
  from: string | null;
  to: string | null;
}

/** The creation-date conditions of a window on `column`, ANDed to the WHERE that picks the candidates. */
const windowSql = (column: string, w: WindowSlots) =>
  (w.from === null ? '' : ` AND ${column} >= ${w.from}`) + (w.to === null ? '' : ` AND ${column} <= ${w.to}`);

// Each kind's candidates: its CANDIDATES most recent matches created within the window, if there is one (the window
// picks the candidates, so that a window on old posts finds them rather than filtering the newest ones away).
const CANDIDATE_SQL = {
  question: (w: WindowSlots) => `SELECT 'question'::text AS type, c.id,
                  ts_rank_cd(c.search_vector, ${TSQ}, 32)::float8 AS score
             FROM (SELECT q.id, q.search_vector FROM questions q WHERE q.search_vector @@ ${TSQ}${windowSql('q.created_at', w)}
                   ORDER BY q.id DESC LIMIT ${CANDIDATES}) c`,
  answer: (w: WindowSlots) => `SELECT 'answer'::text AS type, c.id,
                  ts_rank_cd('${ANSWER_WEIGHTS}'::float4[], c.search_vector, ${TSQ}, 32)::float8 AS score
           FROM (SELECT a.id, a.search_vector FROM answers a WHERE a.search_vector @@ ${TSQ}${windowSql('a.created_at', w)}
                 ORDER BY a.id DESC LIMIT ${CANDIDATES}) c`,
  // Planned once per connection inside the function (migration 0016): the trigram estimates of the name conditions
  // cost more to plan than the branch costs to run. A window is its two last arguments (migration 0024).
  user: (
    w: WindowSlots,
  ) => `SELECT 'user'::text AS type, f.id, (f.similarity * ${USER_WEIGHT})::float8 AS score
         FROM agora_user_name_candidates($1::text, ${CANDIDATES}${
           w.from === null && w.to === null
             ? ''
             : `, ${w.from ?? 'NULL::timestamptz'}, ${w.to ?? 'NULL::timestamptz'}`
         }) f`,
};

// Only the page's rows are read in full, by a statement of their own ($1 the kinds, $2 the ids, $3 the scores, in page
// order); PostgreSQL shapes each as the JSON the API answers, with the text its excerpt is cut from. Its text is the
// same for every search, so it keeps a generic plan (plans: 'reusable'): planned with the search, these joins were
// half of the search statement's planning, which is redone for every search's words.
const PAGE = `unnest($1::text[], $2::int[], $3::float8[]) WITH ORDINALITY AS p(type, id, score, n)`;
const HYDRATE_SQL = `SELECT json_agg(r.hit ORDER BY r.n) AS results FROM (
  SELECT p.n, json_build_object('type', 'question', 'id', q.id, 'score', p.score,
    'title', q.title, 'slug', q.slug, 'text', ${excerptText('q.content')}, 'votes', q.votes,
    'answers_count', q.answers_count, 'has_accepted', q.has_accepted, 'tags', q.tag_names,
    'created_at', ${iso('q.created_at')}) AS hit
  FROM ${PAGE} JOIN questions q ON q.id = p.id WHERE p.type = 'question'
  UNION ALL
  SELECT p.n, json_build_object('type', 'answer', 'id', a.id, 'score', p.score,
    'question_id', a.question_id, 'question_title', q.title, 'question_slug', q.slug,
    'text', ${excerptText('a.content')}, 'votes', a.votes, 'is_accepted', a.is_accepted,
    'created_at', ${iso('a.created_at')}) AS hit
  FROM ${PAGE} JOIN answers a ON a.id = p.id JOIN questions q ON q.id = a.question_id WHERE p.type = 'answer'
  UNION ALL
  SELECT p.n, json_build_object('type', 'user', 'id', u.id, 'score', p.score,
    'username', u.username, 'display_name', u.display_name, 'avatar', u.avatar,
    'reputation', u.reputation) AS hit
  FROM ${PAGE} JOIN users u ON u.id = p.id WHERE p.type = 'user') r`;

/** A text[] literal of kind names (plain words: no quoting needed). */
const kindsLiteral = (kinds: readonly string[]) => `{${kinds.join(',')}}`;

type Kind = keyof typeof CANDIDATE_SQL;

/** What a statement's text depends on: the kinds searched, which bounds the window has, the direction. */
interface Variant {
  kinds: readonly Kind[];
  from: boolean;
  to: boolean;
  order: Direction;
}

/**
 * One statement per search: the candidates of each kind are ranked once, counted and paged; then only the page is
 * read and rendered, by HYDRATE_SQL (a row deleted meanwhile is simply left out). Its text depends only on the variant (which
 * kinds run, which window bounds are given, the direction), so each of the few variants is a prepared statement on
 * every connection. `bounded` says whether a kind reached its CANDIDATES (its total is then a lower bound).
 * `order=desc` (the default) is the most relevant first: score descending, ties by kind, then id descending;
 * `asc` is that order reversed, ties included.
 */
function statement({ kinds, from, to, order }: Variant): string {
  const union = (parts: string[]) => parts.join('\nUNION ALL\n');
  const slots: WindowSlots = {
    from: from ? '$4::timestamptz' : null,
    to: to ? `$${from ? 5 : 4}::timestamptz` : null,
  };
  const by = order === 'desc' ? 'score DESC, type ASC, id DESC' : 'score ASC, type DESC, id ASC';
  return `WITH hits AS (${union(kinds.map((k) => CANDIDATE_SQL[k](slots)))}),
  page AS (SELECT type, id, score FROM hits ORDER BY ${by} LIMIT $2::int OFFSET $3::int)
  SELECT (SELECT count(*)::int FROM hits) AS total,
         coalesce((SELECT bool_or(n >= ${CANDIDATES}) FROM (SELECT count(*) AS n FROM hits GROUP BY type) k), false)
           AS bounded,
         tsvector_to_array(to_tsvector('english', $1::text)) AS lexemes,
         (SELECT array_agg(type ORDER BY ${by}) FROM page) AS types,
         (SELECT array_agg(id ORDER BY ${by}) FROM page) AS ids,
         (SELECT array_agg(score ORDER BY ${by}) FROM page) AS scores`;
}

export function searchRepository(db: Db) {
  const statements = new Map<string, string>();
  const statementFor = (variant: Variant) => {
    const key = `${variant.kinds.join(',')}|${variant.from}|${variant.to}|${variant.order}`;
    let text = statements.get(key);
    if (text === undefined) statements.set(key, (text = statement(variant)));
    return text;
  };

  /** The page's hits in its order. The scores go back as text, which float8 reads as the very same doubles. */
  async function hydrate(types: string[], ids: number[], scores: number[]): Promise<SearchHit[]> {
    const [row] = await preparedRows<{ results: SearchHit[] | null }>(
      db,
      HYDRATE_SQL,
      [kindsLiteral(types), `{${ids.join(',')}}`, `{${scores.join(',')}}`],
      { plans: 'reusable' },
    );
    return row?.results ?? [];
  }

  return {
    /**
     * Full-text search of questions (title A > tags B > body C) and answers with `websearch_to_tsquery` (quoted
     * phrases, `-word`, `or`), and trigram search of users' names, merged by score (ties: kind, then id desc).
     * `names`: whether `type=all` searches users' names too (the caller knows whether the text could be a name);
     * `type=users` always does. Excerpts come back as the plain text to cut them from, with the lexemes of the
     * query (what the search matched on). `fromdate`, `todate` (windows.ts: ISO 8601 or Unix seconds, a bad one
     * is a 400) keep the candidates of every kind created within them; `order` is the direction of the ranking.
     */
    async search(
      params: PageParams & SearchWindow & { q: string; type: SearchType; names: boolean },
    ): Promise<{ results: SearchHit[]; lexemes: string[]; pagination: SearchPagination }> {
      const all = params.type === 'all';
      const kinds: Kind[] = [];
      if (all || params.type === 'questions') kinds.push('question');
      if (all || params.type === 'answers') kinds.push('answer');
      if (params.type === 'users' || (all && params.names)) kinds.push('user');
      const from = params.fromdate === undefined ? undefined : parseInstant(params.fromdate, 'fromdate');
      const to = params.todate === undefined ? undefined : parseInstant(params.todate, 'todate');
      const values: unknown[] = [params.q, params.limit, offsetOf(params)];
      if (from !== undefined) values.push(from);
      if (to !== undefined) values.push(to);
      const variant = {
        kinds,
        from: from !== undefined,
        to: to !== undefined,
        order: params.order ?? 'desc',
      };
      const [row] = await preparedRows<{
        total: number;
        bounded: boolean;
        lexemes: string[];
        types: string[] | null;
        ids: number[] | null;
        scores: number[] | null;
      }>(db, statementFor(variant), values);
      const pagination = paginate(params, row?.total ?? 0);
      return {
        results: row?.ids?.length ? await hydrate(row.types!, row.ids, row.scores!) : [],
        lexemes: row?.lexemes ?? [],
        pagination: row?.bounded ? { ...pagination, total_bounded: true } : pagination,
      };
    },
  };
}
