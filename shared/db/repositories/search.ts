import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { highlightExcerpt } from '../../qa/excerpt.js';
import { couldBeName } from '../../qa/name-query.js';
import { iso, offsetOf, paginate, rows, type PageParams, type Pagination } from './pagination.js';

export const SEARCH_TYPES = ['questions', 'answers', 'users', 'all'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export interface QuestionHit {
  type: 'question';
  id: number;
  score: number;
  title: string;
  slug: string;
  excerpt: string;
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
  excerpt: string;
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
type Unscored = Omit<QuestionHit, 'score'> | Omit<AnswerHit, 'score'> | Omit<UserHit, 'score'>;

/**
 * Scores are comparable across kinds, so `type=all` merges by score: documents use ts_rank_cd normalised into
 * [0, 1) (flag 32: rank / (rank + 1)), answers weighted like a question body; users use their best trigram word similarity halved, so that an exact
 * username (0.5) ranks with a question that has the words once in its title, not above everything.
 */
const USER_WEIGHT = 0.5;
// Answer vectors carry no weights (D); ranking D like a question body (C) makes an answer and a question body that
// say the same thing score the same. Order: {D, C, B, A}; the others are PostgreSQL's defaults.
const ANSWER_WEIGHTS = '{0.2, 0.2, 0.4, 1.0}';
// Headlines are computed on a bounded prefix of the plain text: ts_headline parses all the text it is given.
const EXCERPT_CHARS = 2000;
const HEADLINE_OPTIONS =
  'StartSel=<mark>, StopSel=</mark>, MaxWords=35, MinWords=15, ShortWord=3, MaxFragments=2';

const likePattern = (q: string): string => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Each kind ranks at most its CANDIDATES most recent matches (highest ids). Ranking reads every candidate's vector,
 * so without a bound a common word ("temperature" in half the bodies) would rank tens of thousands of rows; with it
 * a search costs the same whatever the word. PostgreSQL picks the plan per query (the tsquery is a constant at plan
 * time): a common word walks the primary key backwards until it has enough matches, a rare one uses the GIN index.
 * As with GitHub's 1,000-result cap, results past the candidates are not reachable and total_items counts at most
 * CANDIDATES per kind.
 */
export const CANDIDATES = 1000;

function branches(type: SearchType, q: string): SQL[] {
  const wanted = (t: SearchType) => type === 'all' || type === t;
  const tsq = sql`websearch_to_tsquery('english', ${q})`;
  const parts: SQL[] = [];
  if (wanted('questions')) {
    parts.push(sql`SELECT 'question'::text AS type, c.id, ts_rank_cd(c.search_vector, ${tsq}, 32)::float8 AS score
                   FROM (SELECT q.id, q.search_vector FROM questions q WHERE q.search_vector @@ ${tsq}
                         ORDER BY q.id DESC LIMIT ${CANDIDATES}) c`);
  }
  if (wanted('answers')) {
    parts.push(sql`SELECT 'answer'::text AS type, c.id,
                     ts_rank_cd(${ANSWER_WEIGHTS}::float4[], c.search_vector, ${tsq}, 32)::float8 AS score
                   FROM (SELECT a.id, a.search_vector FROM answers a WHERE a.search_vector @@ ${tsq}
                         ORDER BY a.id DESC LIMIT ${CANDIDATES}) c`);
  }
  if (type === 'users' || (type === 'all' && couldBeName(q))) {
    const pattern = likePattern(q);
    parts.push(sql`SELECT 'user'::text AS type, c.id,
                     (greatest(word_similarity(${q}, c.username), word_similarity(${q}, c.display_name)) * ${USER_WEIGHT})::float8 AS score
                   FROM (SELECT u.id, u.username, u.display_name FROM users u
                         WHERE u.username ILIKE ${pattern} OR u.display_name ILIKE ${pattern}
                            OR ${q} <% u.username OR ${q} <% u.display_name
                         ORDER BY u.id DESC LIMIT ${CANDIDATES}) c`);
  }
  return parts;
}

const headline = (body: SQL, q: string) =>
  sql`ts_headline('english', left(agora_plain_text(${body}), ${EXCERPT_CHARS}), websearch_to_tsquery('english', ${q}), ${HEADLINE_OPTIONS})`;

export function searchRepository(db: Db) {
  async function hydrate(
    q: string,
    hits: { type: string; id: number; score: number }[],
  ): Promise<SearchHit[]> {
    const ids = (t: string) =>
      `{${hits
        .filter((h) => h.type === t)
        .map((h) => h.id)
        .join(',')}}`;
    const has = (t: string) => hits.some((h) => h.type === t);
    const [questions, answers, users] = await Promise.all([
      has('question')
        ? rows<Omit<QuestionHit, 'type' | 'score'> & { tag_names: string[] }>(
            db,
            sql`SELECT q.id, q.title, q.slug, ${headline(sql`q.content`, q)} AS excerpt, q.votes, q.answers_count,
                       q.has_accepted, q.tag_names, ${iso(sql`q.created_at`)} AS created_at
                FROM questions q WHERE q.id = ANY(${ids('question')}::int[])`,
          )
        : [],
      has('answer')
        ? rows<Omit<AnswerHit, 'type' | 'score'>>(
            db,
            sql`SELECT a.id, a.question_id, q.title AS question_title, q.slug AS question_slug,
                       ${headline(sql`a.content`, q)} AS excerpt, a.votes, a.is_accepted, ${iso(sql`a.created_at`)} AS created_at
                FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.id = ANY(${ids('answer')}::int[])`,
          )
        : [],
      has('user')
        ? rows<Omit<UserHit, 'type' | 'score'>>(
            db,
            sql`SELECT id, username, display_name, avatar, reputation FROM users WHERE id = ANY(${ids('user')}::int[])`,
          )
        : [],
    ]);
    const byKey = new Map<string, Unscored>();
    for (const { tag_names, excerpt, ...r } of questions) {
      byKey.set(`question:${r.id}`, {
        type: 'question',
        ...r,
        excerpt: highlightExcerpt(excerpt),
        tags: tag_names,
      });
    }
    for (const r of answers)
      byKey.set(`answer:${r.id}`, { type: 'answer', ...r, excerpt: highlightExcerpt(r.excerpt) });
    for (const r of users) byKey.set(`user:${r.id}`, { type: 'user', ...r });
    // A row deleted between the two queries is simply left out of the page.
    return hits.flatMap((h) => {
      const found = byKey.get(`${h.type}:${h.id}`);
      return found ? [{ ...found, score: h.score } as SearchHit] : [];
    });
  }

  return {
    /**
     * Full-text search of questions (title A > tags B > body C) and answers with `websearch_to_tsquery` (quoted
     * phrases, `-word`, `or`), and trigram search of users' names, merged by score (ties: kind, then id desc).
     */
    async search(
      params: PageParams & { q: string; type: SearchType },
    ): Promise<{ results: SearchHit[]; pagination: Pagination }> {
      const parts = branches(params.type, params.q);
      // One statement: the candidates are ranked once, then counted and paged.
      const [row] = await rows<{ total: number; page: { type: string; id: number; score: number }[] | null }>(
        db,
        sql`WITH hits AS (${sql.join(parts, sql` UNION ALL `)})
            SELECT (SELECT count(*)::int FROM hits) AS total,
                   (SELECT json_agg(p) FROM (
                      SELECT type, id, score FROM hits ORDER BY score DESC, type ASC, id DESC
                      LIMIT ${params.limit} OFFSET ${offsetOf(params)}) p) AS page`,
      );
      const hits = row?.page ?? [];
      return { results: await hydrate(params.q, hits), pagination: paginate(params, row?.total ?? 0) };
    },
  };
}
