import type { BulkSession } from './session.js';

/**
 * A bulk load into nearly empty tables is cheapest with their secondary indexes built once at the end (one sort
 * per index) rather than maintained row by row. Within the load's transaction the indexes are dropped and
 * re-created from their own definitions (pg_indexes), so a failed load rolls back to the indexes it found.
 * Indexes that back a constraint or enforce uniqueness stay: loaders rely on them (ON CONFLICT, duplicates
 * refused as they come).
 */
export async function dropSecondaryIndexes(
  session: BulkSession,
  tables: readonly string[],
): Promise<string[]> {
  const rows = await session.query<{ name: string; definition: string }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema() AND t.relname = ANY($1::text[]) AND NOT i.indisunique
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
     ORDER BY c.relname`,
    [`{${tables.join(',')}}`],
  );
  for (const { name } of rows) await session.query(`DROP INDEX "${name.replace(/"/g, '""')}"`);
  return rows.map((r) => r.definition);
}

/** Builds the indexes dropped by dropSecondaryIndexes, with more sort memory than a request would get. */
export async function createIndexes(session: BulkSession, definitions: readonly string[]): Promise<void> {
  if (definitions.length === 0) return;
  session.progress?.step('building indexes');
  await session.query(`SET LOCAL maintenance_work_mem = '512MB'`);
  for (const definition of definitions) {
    await session.query(definition);
    session.progress?.add('indexes', 1);
  }
}
