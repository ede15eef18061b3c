import { arrayLiteral, type Cell } from './array-literal.js';
import { copyRow } from './copy-text.js';
import type { BulkSession } from './session.js';

/** A column of a bulk insert: its name and the PostgreSQL type its values are cast to. */
export interface Column {
  name: string;
  /**
   * `text[]` values are array literals themselves (see arrayLiteral), cast per row; `tsvector` values are
   * tsvector literals (see search-vectors.ts).
   */
  type: 'int' | 'text' | 'bool' | 'timestamptz' | 'smallint' | 'text[]' | 'tsvector';
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Builds `INSERT INTO t (cols) SELECT * FROM unnest($1::type[], …) [suffix]`: one statement per batch, one
 * parameter per column. `suffix` carries an ON CONFLICT clause when the loader upserts.
 */
export function unnestInsert(table: string, columns: readonly Column[], suffix = ''): string {
  const names = columns.map((c) => ident(c.name)).join(', ');
  // unnest would flatten a two-dimensional array, so array columns travel as text and are cast per row.
  const arrays = columns.map((c, i) => `$${i + 1}::${c.type === 'text[]' ? 'text' : c.type}[]`).join(', ');
  const aliases = columns.map((_, i) => `c${i}`);
  const values = columns.map((c, i) => (c.type === 'text[]' ? `c${i}::text[]` : `c${i}`)).join(', ');
  return `INSERT INTO ${ident(table)} (${names}) SELECT ${values} FROM unnest(${arrays}) AS t(${aliases.join(', ')}) ${suffix}`.trim();
}

/**
 * Collects rows and writes them in batches, by COPY where the session has it (without a `suffix`: COPY cannot
 * upsert), else by one unnest INSERT per batch; call `flush()` at the end.
 */
export class BatchInserter {
  /** Column-wise values for the INSERT path (one array literal per column). */
  private readonly columns: Cell[][];
  /** The COPY path's batch, already in COPY text: no per-row object outlives add(). */
  private copyText = '';
  private readonly insertText: string;
  private readonly batchSize: number;
  private readonly useCopy: boolean;
  private pending = 0;
  /** The batch PostgreSQL is still copying, while the next one is being built. */
  private inflight: Promise<void> | undefined;
  written = 0;

  constructor(
    private readonly session: BulkSession,
    private readonly table: string,
    private readonly schema: readonly Column[],
    options: { batchSize?: number; suffix?: string } = {},
  ) {
    this.batchSize = options.batchSize ?? 5000;
    this.columns = schema.map(() => []);
    this.insertText = unnestInsert(table, schema, options.suffix);
    this.useCopy = session.copy !== undefined && !options.suffix;
  }

  /** Adds one row, values in column order; writes the batch when it is full. */
  async add(row: readonly Cell[]): Promise<void> {
    if (row.length !== this.schema.length)
      throw new Error(`expected ${this.schema.length} values, got ${row.length}`);
    if (this.useCopy) this.copyText += copyRow(row);
    else for (let i = 0; i < row.length; i++) this.columns[i]!.push(row[i]);
    if (++this.pending >= this.batchSize) await this.write();
  }

  /** Writes what is pending and waits until every row added so far is in the table. */
  async flush(): Promise<void> {
    await this.write();
    await this.inflight;
  }

  private async write(): Promise<void> {
    if (this.pending === 0) return;
    const n = this.pending;
    this.pending = 0;
    if (this.useCopy) return this.writeByCopy(n);
    const params = this.columns.map((values) => arrayLiteral(values));
    for (const values of this.columns) values.length = 0;
    await this.session.query(this.insertText, params);
    this.counted(n);
  }

  /**
   * Waits for this table's previous batch, then sends this one without waiting for it: the rows of the next
   * batch are generated while PostgreSQL writes these (two cores busy instead of one, turn by turn), and at
   * most two batches per table are in memory.
   */
  private async writeByCopy(n: number): Promise<void> {
    const text = this.copyText;
    this.copyText = '';
    await this.inflight;
    const names = this.schema.map((c) => c.name);
    const sent = this.session.copy!(this.table, names, text).then(() => this.counted(n));
    // Awaited by the next batch or by flush(); until then a failure must not count as unhandled.
    sent.catch(() => {});
    this.inflight = sent;
  }

  private counted(n: number): void {
    this.written += n;
    this.session.progress?.add(this.table, n);
  }
}
