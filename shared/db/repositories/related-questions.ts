import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { preparedQuery } from '../prepared.js';
import { rows } from './pagination.js';
import { anyOf, createTermRarity, everyWindowed, lexemesOf, termMatches, type Term } from './word-lookup.js';
import { SUMMARY_COLUMNS, toSummary, type QuestionSummary, type SummaryRow } from './question-summaries.js';

/**
 * Related questions (GET /questions/{id}/related) and similar ones for an "ask a question" form (GET /similar): the
 * questions that share the rarest words of the text (word-lookup.ts), ranked by full text; each shared tag
 * multiplies a candidate's score by 1.5, so text similarity stays first and tags decide among close texts.
 */

export interface ScoredQuestion extends QuestionSummary {
  /** Relevance, higher is better; comparable within one answer only. */
  score: number;
}

/** Words a question is looked up by (word-lookup.ts). */
const QUERY_TERMS = 8;
/** Candidates kept by full-text rank before tags rerank them. */
const CANDIDATES = 200;
/** The start of a body says what it is about; the rest adds words that match everything. */
const BODY_CHARS = 1000;
const TAG_BOOST = 0.5;

const textArray = (values: readonly string[]) =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

export function relatedQuestionsRepository(db: Db) {
  const rarity = createTermRarity((statement) => rows(db, statement));

  /** Questions matching any of `terms` (word-lookup.ts), ranked by full text, the best CANDIDATES reranked by tags. */
  async function ranked(
    terms: readonly Term[],
    options: { exclude: number; tagNames: string[]; title?: string; limit: number },
  ): Promise<ScoredQuestion[]> {
    if (terms.length === 0) return [];
    // ts_rank normalisation 32 maps a rank into [0, 1); for a typed title, trigram similarity of titles adds the
    // near-misses of spelling that stemming does not catch. A question's tags are distinct, so counting those in
    // the list is the size of the intersection.
    const titleSimilarity = options.title === undefined ? sql`0` : sql`similarity(c.title, ${options.title})`;
    const sharedTags =
      options.tagNames.length === 0
        ? sql`0`
        : sql`(SELECT count(*) FROM unnest(c.tag_names) AS t(name) WHERE t.name = ANY(${textArray(options.tagNames)}::text[]))`;
    // Scored on the candidates' own columns; only the answer's rows are then read in full and rendered.
    // Prepared: parsed once per connection. Planned per call unless the words' lookup has one best plan; the bound on
    // candidates is text, not a parameter, so that a generic plan knows it (as termMatches' window).
    const found = await preparedQuery<SummaryRow & { score: number }>(
      db,
      sql`
        WITH candidates AS (
          SELECT q.id, q.title, q.tag_names, ts_rank(q.search_vector, ${anyOf(terms)}::tsquery, 32) AS rank
          FROM questions q WHERE q.id = ANY(${termMatches('questions', terms, options.exclude)})
          ORDER BY rank DESC, q.id DESC LIMIT ${sql.raw(String(CANDIDATES))}
        ),
        scored AS (
          SELECT c.id, ((c.rank + ${titleSimilarity}) * (1 + ${TAG_BOOST}::float8 * ${sharedTags}))::float8 AS score
          FROM candidates c
          ORDER BY score DESC, c.id DESC
          LIMIT ${options.limit}
        )
        SELECT ${SUMMARY_COLUMNS}, s.score
        FROM scored s JOIN questions q ON q.id = s.id
        ORDER BY s.score DESC, q.id DESC`,
      { plans: everyWindowed(terms) ? 'reusable' : 'per-call' },
    );
    return found.map((r) => ({ ...toSummary(r), score: Number(r.score) }));
  }

  return {
    /** Questions like `questionId` (its title and the start of its body), best first; null for an unknown one. */
    async related(questionId: number, limit: number): Promise<ScoredQuestion[] | null> {
      const [source] = await preparedQuery<{ lexemes: string[]; tag_names: string[] }>(
        db,
        sql`SELECT ${lexemesOf(sql`title || E'\\n' || left(agora_plain_text(content), ${BODY_CHARS})`)} AS lexemes,
                   tag_names
            FROM questions WHERE id = ${questionId}`,
        { plans: 'reusable' },
      );
      if (!source) return null;
      const terms = await rarity.rarest(source.lexemes, 'questions', QUERY_TERMS);
      return ranked(terms, { exclude: questionId, tagNames: source.tag_names, limit });
    },

    /** Questions whose title and body resemble `title`, boosted by the tags (slugs) given, best first. */
    async similar(title: string, tagSlugs: string[], limit: number): Promise<ScoredQuestion[]> {
      const tagNames =
        tagSlugs.length === 0
          ? []
          : (
              await preparedQuery<{ name: string }>(
                db,
                sql`SELECT name FROM tags WHERE slug = ANY(${textArray(tagSlugs)}::text[])`,
                { plans: 'reusable' },
              )
            ).map((t) => t.name);
      const [found] = await preparedQuery<{ lexemes: string[] }>(
        db,
        sql`SELECT ${lexemesOf(sql`${title}::text`)} AS lexemes`,
        { plans: 'reusable' },
      );
      const terms = await rarity.rarest(found?.lexemes ?? [], 'questions', QUERY_TERMS);
      return ranked(terms, { exclude: 0, tagNames, title, limit });
    },
  };
}
