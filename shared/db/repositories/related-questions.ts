import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { rows } from './pagination.js';
import { SUMMARY_COLUMNS, toSummary, type QuestionSummary, type SummaryRow } from './question-summaries.js';

/**
 * Related questions (GET /questions/{id}/related) and similar ones for an "ask a question" form (GET /similar): the
 * full-text index (questions.search_vector) finds the questions that share the rarest words of the text; each shared
 * tag multiplies a candidate's score by 1.5, so text similarity stays first and tags decide among close texts.
 */

export interface ScoredQuestion extends QuestionSummary {
  /** Relevance, higher is better; comparable within one answer only. */
  score: number;
}

/**
 * The words a text is looked up by: its rarest ones, by the frequencies PostgreSQL's statistics keep for the column
 * (a word they do not list is rarer than every one they do), first appearance breaking ties. Rare words say what a
 * question is about and match few rows; common ones match most of the site, and ranking every match of them cost
 * seconds per request at a million questions.
 */
const QUERY_TERMS = 8;
/**
 * Matches taken per word, the most recent first: a rare word brings all of its few, a common one no more than this,
 * so the cost is bounded whatever the words and the size of the site, and a rare word's old match is still found.
 */
const MATCHES_PER_TERM = 150;
/** Candidates kept by full-text rank before tags rerank them. */
const CANDIDATES = 200;
/** The start of a body says what it is about; the rest adds words that match everything. */
const BODY_CHARS = 1000;
const TAG_BOOST = 0.5;

const textArray = (values: readonly string[]) =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

/** The text's QUERY_TERMS rarest lexemes, each quoted as tsquery text (so not stemmed again), rarest first. */
const rareTerms = (text: SQL) => sql`ARRAY(
  SELECT '''' || replace(t.lexeme, '''', '''''') || '''' FROM (
    SELECT u.lexeme FROM unnest(to_tsvector('english', ${text})) AS u(lexeme, positions, weights)
    LEFT JOIN (
      SELECT e.elem, e.freq FROM pg_stats s,
        unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(elem, freq)
      WHERE s.schemaname = current_schema() AND s.tablename = 'questions' AND s.attname = 'search_vector'
    ) f ON f.elem = u.lexeme
    WHERE u.lexeme !~ '\\\\'
    ORDER BY coalesce(f.freq, 0), u.positions[1]
    LIMIT ${QUERY_TERMS}
  ) t
)`;

export function relatedQuestionsRepository(db: Db) {
  /**
   * Questions matching any of `terms`, ranked: each term's MATCHES_PER_TERM most recent matches, the best CANDIDATES
   * of them by full-text rank against all the terms, reranked by shared tags. Each term is a value its lookup is
   * planned with, so PostgreSQL walks the primary key for a common word and the GIN index for a rare one.
   */
  async function ranked(
    terms: readonly string[],
    options: { exclude: number; tagNames: string[]; title?: string; limit: number },
  ): Promise<ScoredQuestion[]> {
    if (terms.length === 0) return [];
    const matches = sql.join(
      terms.map(
        (term) => sql`(SELECT q.id FROM questions q WHERE q.search_vector @@ ${term}::tsquery
                       AND q.id <> ${options.exclude} ORDER BY q.id DESC LIMIT ${MATCHES_PER_TERM})`,
      ),
      sql` UNION `,
    );
    const anyTerm = terms.join(' | ');
    // ts_rank normalisation 32 maps a rank into [0, 1); for a typed title, trigram similarity of titles adds the
    // near-misses of spelling that stemming does not catch.
    const titleSimilarity = options.title === undefined ? sql`0` : sql`similarity(q.title, ${options.title})`;
    const found = await rows<SummaryRow & { score: number }>(
      db,
      sql`
        WITH candidates AS (
          SELECT q.id, ts_rank(q.search_vector, ${anyTerm}::tsquery, 32) AS rank
          FROM questions q WHERE q.id IN (${matches})
          ORDER BY rank DESC, q.id DESC LIMIT ${CANDIDATES}
        )
        SELECT ${SUMMARY_COLUMNS},
          ((c.rank + ${titleSimilarity}) * (1 + ${TAG_BOOST}::float8 * cardinality(ARRAY(
            SELECT unnest(q.tag_names) INTERSECT SELECT unnest(${textArray(options.tagNames)}::text[])
          ))))::float8 AS score
        FROM candidates c JOIN questions q ON q.id = c.id
        ORDER BY score DESC, q.id DESC
        LIMIT ${options.limit}`,
    );
    return found.map((r) => ({ ...toSummary(r), score: Number(r.score) }));
  }

  return {
    /** Questions like `questionId` (its title and the start of its body), best first; null for an unknown one. */
    async related(questionId: number, limit: number): Promise<ScoredQuestion[] | null> {
      const [source] = await rows<{ terms: string[]; tag_names: string[] }>(
        db,
        sql`SELECT ${rareTerms(sql`title || E'\\n' || left(agora_plain_text(content), ${BODY_CHARS})`)} AS terms,
                   tag_names
            FROM questions WHERE id = ${questionId}`,
      );
      if (!source) return null;
      return ranked(source.terms, { exclude: questionId, tagNames: source.tag_names, limit });
    },

    /** Questions whose title and body resemble `title`, boosted by the tags (slugs) given, best first. */
    async similar(title: string, tagSlugs: string[], limit: number): Promise<ScoredQuestion[]> {
      const tagNames =
        tagSlugs.length === 0
          ? []
          : (
              await rows<{ name: string }>(
                db,
                sql`SELECT name FROM tags WHERE slug = ANY(${textArray(tagSlugs)}::text[])`,
              )
            ).map((t) => t.name);
      const [found] = await rows<{ terms: string[] }>(
        db,
        sql`SELECT ${rareTerms(sql`${title}::text`)} AS terms`,
      );
      return ranked(found?.terms ?? [], { exclude: 0, tagNames, title, limit });
    },
  };
}
