import type { BulkSession } from './session.js';

/** The Q&A content tables that seeding and importing fill, parents first. */
export const QA_TABLES = [
  'users',
  'categories',
  'tags',
  'questions',
  'question_tags',
  'answers',
  'comments',
  'votes',
] as const;
const SERIAL_TABLES = ['users', 'categories', 'tags', 'questions', 'answers', 'comments', 'votes'] as const;

/** Row counts of the Q&A tables, for summaries and for the "refuse a non-empty database" rule. */
export async function countQaRows(session: BulkSession): Promise<Record<(typeof QA_TABLES)[number], number>> {
  const selects = QA_TABLES.map((t) => `(SELECT count(*) FROM "${t}")::int AS "${t}"`).join(', ');
  const [row] = await session.query<Record<string, number>>(`SELECT ${selects}`);
  return row as Record<(typeof QA_TABLES)[number], number>;
}

/**
 * Ids that something outside the truncated tables still names, so the rows made after a reset must not take them:
 * rate-limit counters in Redis are kept per API key id (a new key numbered as a deleted one would start with its
 * spent budget), and deliveries (kept, with their attempts) name their webhook subscription in their subject
 * (`webhook:<id>`: a new subscription under a deleted one's id would list its deliveries, redeliver them to
 * their URL and count their attempts).
 */
const KEPT_SEQUENCES = ['api_keys', 'webhook_subscriptions'] as const;

/**
 * Empties the Q&A tables and restarts their ids. CASCADE also empties what references users or questions
 * (API keys, verification lists, webhook subscriptions, polls): they would point at rows that no longer exist.
 * The ids of KEPT_SEQUENCES go on from where they were.
 */
export async function truncateQa(session: BulkSession): Promise<void> {
  const sequence = (table: string) => `pg_get_serial_sequence('${table}', 'id')`;
  const next: number[] = [];
  for (const table of KEPT_SEQUENCES) {
    const [row] = await session.query<{ id: string }>(`SELECT nextval(${sequence(table)})::text AS id`);
    next.push(Number(row!.id));
  }
  await session.query(`TRUNCATE ${QA_TABLES.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`);
  for (const [i, table] of KEPT_SEQUENCES.entries()) {
    await session.query(`SELECT setval(${sequence(table)}, ${next[i]}, false)`);
  }
}

/** After rows were written with explicit ids, moves each id sequence past the largest id so API inserts go on. */
export async function syncSequences(session: BulkSession): Promise<void> {
  for (const table of SERIAL_TABLES) {
    await session.query(
      `SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), GREATEST((SELECT max(id) FROM "${table}"), 0) + 1, false)`,
    );
  }
}

/** Recomputes every maintained counter (migration 0002); required after writing with triggers off. */
export async function recount(session: BulkSession): Promise<void> {
  session.progress?.step('recounting');
  await session.query('SELECT agora_recount()');
}

/**
 * Refreshes the planner's statistics of the loaded tables, in the load's transaction. Without them, until
 * autovacuum's next pass, the planner guesses: right after a 100k seed a middle page of /api/questions was sorted
 * from a full scan (234 ms) instead of read from its index (19 ms), and search words had no frequencies to choose
 * between walking the newest rows and the GIN index.
 */
export async function analyzeQa(session: BulkSession): Promise<void> {
  session.progress?.step('analysing');
  await session.query(`ANALYZE ${QA_TABLES.map((t) => `"${t}"`).join(', ')}`);
}
