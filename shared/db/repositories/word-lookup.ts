import { sql, type SQL } from 'drizzle-orm';

/**
 * Finding the posts that share words with a text (related questions, "ask a question" suggestions, the AI's
 * duplicate check and chat retrieval) at a cost that does not grow with the site. Ranking every match of an OR of
 * a text's words read most of the site on every lookup (8–10 s per related-questions read at a million questions).
 * Instead a text is looked up by its rarest words, by the frequencies PostgreSQL's statistics keep for the table's
 * `search_vector` (a word they do not list is rarer than every one they do; first appearance breaks ties): rare
 * words say what a text is about and match few rows. Each word brings at most MATCHES_PER_TERM matches, the most
 * recent first, planned with the word as a value, so the GIN index serves a rare word and the primary key walk a
 * common one; a rare word's matches, however old, are all candidates.
 */

export type SearchedTable = 'questions' | 'answers';

/** Matches each word brings: bounds the rows ranked per lookup to terms × this. */
export const MATCHES_PER_TERM = 150;

/**
 * The text's `terms` rarest lexemes in `table`, each quoted as tsquery text (so not stemmed again), rarest first:
 * an SQL array expression.
 */
export const rareTerms = (text: SQL, table: SearchedTable, terms: number): SQL => sql`ARRAY(
  SELECT '''' || replace(t.lexeme, '''', '''''') || '''' FROM (
    SELECT u.lexeme FROM unnest(to_tsvector('english', ${text})) AS u(lexeme, positions, weights)
    LEFT JOIN (
      SELECT e.elem, e.freq FROM pg_stats s,
        unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(elem, freq)
      WHERE s.schemaname = current_schema() AND s.tablename = ${table} AND s.attname = 'search_vector'
    ) f ON f.elem = u.lexeme
    WHERE u.lexeme !~ '\\\\'
    ORDER BY coalesce(f.freq, 0), u.positions[1]
    LIMIT ${terms}
  ) t
)`;

/** The ids of `table`'s rows matching any of `terms` (from rareTerms): each term's MATCHES_PER_TERM most recent. */
export function termMatches(table: SearchedTable, terms: readonly string[], excludeId = 0): SQL {
  if (terms.length === 0) return sql`SELECT NULL::int WHERE false`;
  return sql.join(
    terms.map(
      (term) => sql`(SELECT p.id FROM ${sql.raw(table)} p WHERE p.search_vector @@ ${term}::tsquery
                     AND p.id <> ${excludeId} ORDER BY p.id DESC LIMIT ${MATCHES_PER_TERM})`,
    ),
    sql` UNION `,
  );
}

/** A tsquery text matching any of `terms` (from rareTerms), to rank the matches by. */
export const anyOf = (terms: readonly string[]): string => terms.join(' | ');
