import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Database } from '../../../shared/db/client.js';
import { resultsAfter, type ResultRow } from '../../../shared/db/repositories/verification-lists.js';
import { isDatabaseUnavailable } from '../../../shared/db/unavailable.js';
import { VerificationResult } from '../schemas.js';

/**
 * The streamed result formats (NDJSON, CSV): every finished row (or every row of the wanted statuses) in input
 * order, read from PostgreSQL in keyset batches by row number. A batch is the only thing in memory, and no
 * transaction or connection is held between batches, so a slow download pins nothing in the database.
 *
 * A batch whose read meets the database away (a restart, a failover) is read again until `retryWindowMs` has
 * passed: a blip costs the download a pause, not its end. A longer outage ends the stream unfinished (the
 * chunked body is cut, never closed as if complete), and the client asks for the rest with `after_row`.
 */

const BATCH = 1000;
const STREAM_RETRY_WINDOW_MS = 15_000;
const MAX_RETRY_DELAY_MS = 1000;

export interface StreamOptions {
  /** Only rows after this 1-based row (0: from the first). */
  afterRow?: number;
  retryWindowMs?: number;
}

async function batchAfter(
  database: Database,
  listId: string,
  statuses: readonly string[] | null,
  after: number,
  retryWindowMs: number,
): Promise<ResultRow[]> {
  const deadline = Date.now() + retryWindowMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await resultsAfter(database.db, listId, statuses, after, BATCH);
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() >= deadline) throw err;
      const delay = Math.min(MAX_RETRY_DELAY_MS, 50 * 2 ** attempt, deadline - Date.now());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The result fields in the order of the API's schema (jsonb does not keep key order). */
export const RESULT_FIELDS = Object.keys(
  VerificationResult.properties,
) as (keyof typeof VerificationResult.properties)[];

export function orderedResult(row: ResultRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of RESULT_FIELDS) out[field] = row.result[field] ?? null;
  out.row = row.row;
  return out;
}

async function* finishedRows(
  database: Database,
  listId: string,
  statuses: readonly string[] | null,
  { afterRow = 0, retryWindowMs = STREAM_RETRY_WINDOW_MS }: StreamOptions,
): AsyncGenerator<ResultRow> {
  let after = afterRow;
  for (;;) {
    const batch = await batchAfter(database, listId, statuses, after, retryWindowMs);
    for (const row of batch) yield row;
    if (batch.length < BATCH) return;
    after = batch[batch.length - 1]!.row;
  }
}

export function ndjsonStream(
  database: Database,
  listId: string,
  statuses: readonly string[] | null,
  options: StreamOptions = {},
): Readable {
  return Readable.from(
    (async function* () {
      for await (const row of finishedRows(database, listId, statuses, options))
        yield `${JSON.stringify(orderedResult(row))}\n`;
    })(),
  );
}

/**
 * A spreadsheet runs a cell starting with = + - @ (or a tab or CR before them) as a formula: such cells get a
 * leading apostrophe. Uploaded cells and remote SMTP replies alike are untrusted.
 */
export function safeCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/**
 * The result fields appended to the uploaded columns: `email` only when no uploaded column has that name (the
 * upload's own column holds the address then), the others always, a name the upload already uses with a
 * `verify_` prefix.
 */
export function appendedFields(columns: readonly string[]): { field: string; name: string }[] {
  const taken = new Set(columns.map((c) => c.trim().toLowerCase()));
  return [...RESULT_FIELDS.filter((f) => f !== 'email' || !taken.has('email')), 'row'].map((field) => ({
    field,
    name: taken.has(field) ? `verify_${field}` : field,
  }));
}

export function csvStream(
  database: Database,
  listId: string,
  uploaded: string[] | null,
  statuses: readonly string[] | null,
  options: StreamOptions = {},
): Readable {
  const columns = uploaded ?? ['email'];
  const line = (cells: unknown[]) =>
    stringify([cells.map(safeCell)], { eof: true, record_delimiter: '\r\n' });
  return Readable.from(
    (async function* () {
      const appendedColumns = appendedFields(columns);
      // A resumed download continues a file that has its header already.
      if (!options.afterRow) yield line([...columns, ...appendedColumns.map((c) => c.name)]);
      for await (const row of finishedRows(database, listId, statuses, options)) {
        const fields = row.fields ?? [String(row.result.email ?? '')];
        // Rows may be shorter or longer than the header (a ragged CSV): padded, never shifted.
        const uploadedCells = columns.map((_, k) => fields[k] ?? '');
        const result = orderedResult(row);
        // A list-valued field (mx_records) is one cell, its entries separated by spaces.
        const cell = (value: unknown) => (Array.isArray(value) ? value.join(' ') : value);
        const appended = appendedColumns.map(({ field }) =>
          field === 'row' ? row.row : cell(result[field]),
        );
        yield line([...uploadedCells, ...appended]);
      }
    })(),
  );
}
