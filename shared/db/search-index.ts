import { sql } from 'drizzle-orm';
import type { Database } from './client.js';

/**
 * The access method of the full-text search indexes as the database has them (issue 22 item 4 asks for the path in
 * use to be reported): the methods of the indexes on `questions.search_vector` and `answers.search_vector`, read
 * from the catalogue rather than assumed, so an index dropped or rebuilt with another method by hand shows. The
 * migrations create GIN on every server (RUM was measured and not adopted: docs/qa-api.md, "Search"), so this is
 * "gin"; several methods are listed sorted ("gin,rum"), no such index at all is "none".
 */
export async function searchIndexMethod(database: Pick<Database, 'query'>): Promise<string> {
  const [row] = await database.query<{ methods: string | null }>(sql`
    SELECT string_agg(DISTINCT am.amname, ',' ORDER BY am.amname) AS methods
    FROM pg_index i
    JOIN pg_class ix ON ix.oid = i.indexrelid
    JOIN pg_am am ON am.oid = ix.relam
    JOIN pg_attribute att ON att.attrelid = i.indrelid AND att.attnum = ANY (i.indkey::int2[])
    WHERE i.indrelid IN ('questions'::regclass, 'answers'::regclass) AND att.attname = 'search_vector'`);
  return row?.methods ?? 'none';
}
