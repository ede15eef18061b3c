import { sql, type SQL } from 'drizzle-orm';

/**
 * Finding the posts that share words with a text (related questions, "ask a question" suggestions, the AI's
 * duplicate check and chat retrieval) at a cost that does not grow with the site. Ranking every match of an OR of
 * a text's words read most of the site on every lookup (8–10 s per related-questions read at a million questions).
 * Instead a text is looked up by its rarest words, by the frequencies PostgreSQL's statistics keep for the table's
 * `search_vector` (a word they do not list is rarer than every one they do; first appearance breaks ties): rare
 * words say what a text is about and match few rows. A rare word brings all its matches, however old, when it has at
 * most MATCHES_PER_TERM of them (its own lookup, with the word as a value, so that the GIN index serves it). A more
 * frequent word brings its matches among the newest ROWS_PER_TERM rows only (about ROWS_PER_TERM × f of a word of
 * frequency f, at most MATCHES_PER_TERM), so that no word costs more than that window whatever the site's size; the
 * frequent words share one walk of the window, each row tested once against all of them (a walk per word read the
 * same newest rows once per word). A word too rare to find MATCHES_OF_A_FREQUENT_TERM in the window, yet with more
 * matches than MATCHES_PER_TERM, brings its newest MATCHES_OF_A_FREQUENT_TERM by its own lookup.
 */

export type SearchedTable = 'questions' | 'answers';

/** Matches a word brings at most (all of a rare word's): bounds the rows ranked per lookup to terms × this. */
const MATCHES_PER_TERM = 150;
/** The newest rows a frequent word's matches are looked for in. */
const ROWS_PER_TERM = 1_000;
/** Matches a frequent word still brings. */
const MATCHES_OF_A_FREQUENT_TERM = 10;

/** A word to look a text up by: as tsquery text (quoted, so not stemmed again), and how its matches are found. */
export interface Term {
  query: string;
  /** Most matches it brings. */
  matches: number;
  /** Its matches are looked for among the newest ROWS_PER_TERM rows, in the walk it shares with the other such words. */
  inWindow: boolean;
}

/** How a word of `frequency` in a table of `rows` rows is looked up (module comment). */
export function lookupOf(frequency: number, rows: number): Pick<Term, 'matches' | 'inWindow'> {
  if (frequency * rows <= MATCHES_PER_TERM) return { matches: MATCHES_PER_TERM, inWindow: false };
  const affordable = Math.round(ROWS_PER_TERM * frequency);
  if (affordable < MATCHES_OF_A_FREQUENT_TERM)
    return { matches: MATCHES_OF_A_FREQUENT_TERM, inWindow: false };
  return { matches: Math.min(MATCHES_PER_TERM, affordable), inWindow: true };
}

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

interface Statistics {
  /** Frequency of each word the statistics list, as a fraction of the table's rows. */
  byLexeme: Map<string, number>;
  /** The table's rows, as the statistics estimate them. */
  rows: number;
}

/** The statistics row a TermRarity reads: the word frequencies of `search_vector` and the table's row estimate. */
export type StatisticsRow = { elems: string[] | null; freqs: number[] | null; rows: number | null };

/**
 * Picks a text's rarest words by the frequencies PostgreSQL's statistics keep for a table's `search_vector`, read
 * from `pg_stats` once per FREQUENCIES_TTL_MS and kept in the process: reading and unnesting them on every lookup
 * cost PostgreSQL several milliseconds, most of what an "ask a question" lookup cost.
 */
export function createTermRarity(read: (statement: SQL) => Promise<StatisticsRow[]>) {
  const kept = new Map<SearchedTable, { until: number; statistics: Promise<Statistics> }>();

  function statistics(table: SearchedTable): Promise<Statistics> {
    const entry = kept.get(table);
    if (entry && entry.until > Date.now()) return entry.statistics;
    const loading = read(
      sql`SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs::float8[] AS freqs,
                 (SELECT c.reltuples::float8 FROM pg_class c WHERE c.oid = ${table}::text::regclass) AS rows
          FROM (SELECT NULL) AS one
          LEFT JOIN pg_stats s ON s.schemaname = current_schema() AND s.tablename = ${table}
            AND s.attname = 'search_vector'`,
    ).then(([row]) => {
      const byLexeme = new Map<string, number>();
      // The frequencies array ends with three summary values past the elements; they pair with nothing.
      if (Array.isArray(row?.elems) && Array.isArray(row.freqs))
        row.elems.forEach((elem, k) => byLexeme.set(elem, Number(row.freqs![k]) || 0));
      // A table never analysed has -1 (unknown): its words are all rare then.
      return { byLexeme, rows: Math.max(0, Number(row?.rows) || 0) };
    });
    kept.set(table, { until: Date.now() + FREQUENCIES_TTL_MS, statistics: loading });
    // A failed read is not kept: the next lookup reads again.
    loading.catch(() => {
      if (kept.get(table)?.statistics === loading) kept.delete(table);
    });
    return loading;
  }

  return {
    /**
     * The `terms` rarest of `lexemes` (from lexemesOf, in order of appearance) in `table`, rarest first, each with
     * the matches it brings; a word the statistics do not list is rarer than every one they do, and the first to
     * appear wins a tie.
     */
    async rarest(lexemes: readonly string[], table: SearchedTable, terms: number): Promise<Term[]> {
      const { byLexeme, rows } = await statistics(table);
      return lexemes
        .map((lexeme, k) => ({ lexeme, k, freq: byLexeme.get(lexeme) ?? 0 }))
        .sort((a, b) => a.freq - b.freq || a.k - b.k)
        .slice(0, terms)
        .map(({ lexeme, freq }) => ({
          query: `'${lexeme.replace(/'/g, "''")}'`,
          ...lookupOf(freq, rows),
        }));
    },
  };
}

/**
 * The ids of `table`'s rows matching any of `terms` (from `rarest`), as many as each brings (module comment): an
 * array, for `id = ANY(…)`. As an array the planner looks the ids up by primary key; as `id IN (…)` it expected
 * terms × matches of them and hashed the whole table instead.
 */
export function termMatches(table: SearchedTable, terms: readonly Term[], excludeId = 0): SQL {
  const from = sql.raw(table);
  const lookups = terms
    .filter((term) => !term.inWindow)
    .map(
      (term) => sql`(SELECT p.id FROM ${from} p WHERE p.search_vector @@ ${term.query}::tsquery
                     AND p.id <> ${excludeId} ORDER BY p.id DESC LIMIT ${term.matches})`,
    );
  const windowed = terms.filter((term) => term.inWindow);
  if (windowed.length > 0)
    lookups.push(
      // The window's size as text, not a parameter: a generic plan (everyWindowed) then still knows it is small.
      sql`(SELECT w.id FROM (SELECT p.id, p.search_vector FROM ${from} p ORDER BY p.id DESC LIMIT ${sql.raw(String(ROWS_PER_TERM))}) w
           WHERE w.search_vector @@ ${anyOf(windowed)}::tsquery AND w.id <> ${excludeId}
           ORDER BY w.id DESC LIMIT ${windowed.reduce((sum, term) => sum + term.matches, 0)})`,
    );
  if (lookups.length === 0) return sql`ARRAY[]::int[]`;
  return sql`ARRAY(${sql.join(lookups, sql` UNION `)})`;
}

/**
 * Whether every one of `terms` is looked up in the window of the newest rows: the lookup's best plan is then the same
 * whatever the words (walk the window, test each row), so it may run on a generic plan. A word looked up by
 * itself may be rare (the GIN index) or not (the primary key), which only its value tells the planner.
 */
export const everyWindowed = (terms: readonly Term[]): boolean => terms.every((term) => term.inWindow);

/** A tsquery text matching any of `terms` (from `rarest`), to rank the matches by. */
export const anyOf = (terms: readonly Term[]): string => terms.map((term) => term.query).join(' | ');
