import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

const USERS = 100_000;

/**
 * The user-name branch of a search is a generic plan (migration 0016). At a few hundred thousand users that plan
 * walked the primary key from the newest user, expecting a match every few dozen rows, and read every user for a
 * text no name contains (1.1 s per search at 250,000). What it reads must be bounded by the names that match:
 * counted here from PostgreSQL's own per-table statistics of rows fetched, on one connection.
 */
describe('search: the user-name branch at a hundred thousand users', () => {
  let runtime: TestRuntime;
  let sql: postgres.Sql;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    sql = postgres(runtime.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    // Loaded as the seed loads (triggers off): the change feed and list counters have nothing to do with this.
    await sql`SET session_replication_role = replica`;
    await sql`INSERT INTO users (username, display_name)
              SELECT 'member_' || n, 'Member ' || n FROM generate_series(1, ${USERS}::int) AS n`;
    await sql`RESET session_replication_role`;
    await sql`ANALYZE users`;
  }, 120_000);

  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await runtime?.close();
  });

  /** Rows of `users` read so far by this database's backends, as the statistics have them once flushed. */
  const rowsRead = async (): Promise<number> => {
    await sql`SELECT pg_stat_force_next_flush()`;
    await sql`SELECT 1`; // the flush happens as this backend goes idle after the previous statement
    await sql`SELECT pg_stat_clear_snapshot()`;
    const [row] = await sql<{ read: string }[]>`
      SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS read
      FROM pg_stat_user_tables WHERE relname = 'users'`;
    return Number(row!.read);
  };

  // A word (trigram indexes) and a two-letter text (prefix indexes) that no name contains.
  it.each(['quixotic', 'zq'])('%j reads no user row', async (text) => {
    const before = await rowsRead();
    expect(await sql`SELECT id FROM agora_user_name_candidates(${text}, 200)`).toHaveLength(0);
    // A search's date window (migration 0024) tests the names the indexes found, and no other row.
    expect(
      await sql`SELECT id FROM agora_user_name_candidates(${text}, 200, '2000-01-01'::timestamptz, NULL)`,
    ).toHaveLength(0);
    expect((await rowsRead()) - before).toBeLessThan(100);
  });
});
