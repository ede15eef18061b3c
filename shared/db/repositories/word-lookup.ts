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
 * The lexemes of a text (English configuration) in the order they first appear, those with a backslash left out
 * (they cannot be quoted as tsquery text): an SQL array expression, for `rarest`.
 */
export const lexemesOf = (text: SQL): SQL => sql`ARRAY(
  SELECT u.lexeme FROM unnest(to_tsvector('english', ${text})) AS u(lexeme, positions, weights)
  WHERE u.lexeme !~ '\\\\'
  ORDER BY u.positions[1], u.lexeme
)`;

/** How long the statistics' word frequencies are kept in a process: they change with ANALYZE, slowly. */
const FREQUENCIES_TTL_MS = 5 * 60_000;

/**
 * Picks a text's rarest words by the frequencies PostgreSQL's statistics keep for a table's `search_vector`, read
 * from `pg_stats` once per FREQUENCIES_TTL_MS and kept in the process: reading and unnesting them on every lookup
 * cost PostgreSQL several milliseconds, most of what an "ask a question" lookup cost.
 */
export function createTermRarity(
  read: (statement: SQL) => Promise<{ elems: string[] | null; freqs: number[] | null }[]>,
) {
  const kept = new Map<SearchedTable, { until: number; frequencies: Promise<Map<string, number>> }>();

  function frequencies(table: SearchedTable): Promise<Map<string, number>> {
    const entry = kept.get(table);
    if (entry && entry.until > Date.now()) return entry.frequencies;
    const loading = read(
      sql`SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs::float8[] AS freqs FROM pg_stats s
          WHERE s.schemaname = current_schema() AND s.tablename = ${table} AND s.attname = 'search_vector'`,
    ).then(([row]) => {
      const byLexeme = new Map<string, number>();
      // The frequencies array ends with three summary values past the elements; they pair with nothing.
      if (!Array.isArray(row?.elems) || !Array.isArray(row.freqs)) return byLexeme;
      row.elems.forEach((elem, k) => byLexeme.set(elem, Number(row.freqs![k]) || 0));
      return byLexeme;
    });
    kept.set(table, { until: Date.now() + FREQUENCIES_TTL_MS, frequencies: loading });
    // A failed read is not kept: the next lookup reads again.
    loading.catch(() => {
      if (kept.get(table)?.frequencies === loading) kept.delete(table);
    });
    return loading;
  }

  return {
    /**
     * The `terms` rarest of `lexemes` (from lexemesOf, in order of appearance) in `table`, each quoted as tsquery
     * text (so not stemmed again), rarest first; a word the statistics do not list is rarer than every one they do,
     * and the first to appear wins a tie.
     */
    async rarest(lexemes: readonly string[], table: SearchedTable, terms: number): Promise<string[]> {
      const byLexeme = await frequencies(table);
      return lexemes
        .map((lexeme, k) => ({ lexeme, k, freq: byLexeme.get(lexeme) ?? 0 }))
        .sort((a, b) => a.freq - b.freq || a.k - b.k)
        .slice(0, terms)
        .map(({ lexeme }) => `'${lexeme.replace(/'/g, "''")}'`);
    },
  };
}

/** The ids of `table`'s rows matching any of `terms` (from `rarest`): each term's MATCHES_PER_TERM most recent. */
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

/** A tsquery text matching any of `terms` (from `rarest`), to rank the matches by. */
export const anyOf = (terms: readonly string[]): string => terms.join(' | ');
