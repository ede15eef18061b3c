import { StringDecoder } from 'node:string_decoder';
import { PassThrough, Transform, type Readable, type Writable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { ListTooLargeError, type ListEntry } from '../../../shared/lists/create.js';
import { RequestTimeoutError, ValidationError } from '../../../shared/errors.js';

/**
 * Reads an uploaded list as a stream: CSV (text/csv, parsed by csv-parse) or one address per line (text/plain).
 * Memory holds one record at a time; the caller writes the entries to PostgreSQL in batches as they come.
 */

export interface UploadSource {
  entries: AsyncIterable<ListEntry>;
  /** The header row (or generated names for a headerless CSV), known once the entries have been read. */
  columns(): string[] | null;
}

export interface UploadOptions {
  kind: 'csv' | 'plain';
  /** email_column: a header name or a 1-based index; absent, the column is detected. */
  emailColumn: string | undefined;
  maxBytes: number;
}

/** A cell that looks like an address: enough to pick a column, not a verdict (the engine decides that). */
const looksLikeAddress = (cell: string | undefined): boolean =>
  cell !== undefined && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(cell.trim());
const isEmailHeader = (cell: string): boolean => /^\s*e-?mail/i.test(cell);

const tooLarge = (maxBytes: number) => new ListTooLargeError(`A list upload is at most ${maxBytes} bytes`);

/**
 * How long an upload may send nothing. Its rows are written inside one transaction as they arrive, so a client that
 * stops sending holds a database connection: it gives that back after this long instead of the server's whole
 * request timeout.
 */
export const UPLOAD_IDLE_MS = 15_000;

/**
 * Pipes the request into `target` through a byte counter. Past `maxBytes`, or when the reader stops early, the
 * request is unpiped and drained rather than destroyed, so the error response still reaches the client.
 * Called when the upload is parsed, before any transaction opens: a body that already failed (a compressed body
 * that does not decompress, broken chunked framing, a client gone) fails the reader at once, where waiting for its
 * events would wait for ever.
 */
function feed(body: Readable, maxBytes: number, target: Writable & Readable): () => void {
  let bytes = 0;
  const idle = setTimeout(
    () => target.destroy(new RequestTimeoutError(`The upload sent nothing for ${UPLOAD_IDLE_MS / 1000} s`)),
    UPLOAD_IDLE_MS,
  ).unref();
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      idle.refresh();
      bytes += chunk.length;
      if (bytes > maxBytes) callback(tooLarge(maxBytes));
      else callback(null, chunk);
    },
    flush(callback) {
      clearTimeout(idle);
      callback();
    },
  });
  const stop = () => {
    clearTimeout(idle);
    body.unpipe(counter);
    body.resume();
  };
  target.on('close', () => clearTimeout(idle));
  // The reader sees the error through its iteration; an upload refused before it is read (a bad callback URL) has
  // no reader, and its failure must not be an uncaught error.
  target.on('error', () => {});
  counter.on('error', (err) => {
    stop();
    target.destroy(err);
  });
  body.on('error', (err) => target.destroy(err));
  // A client that goes away mid-upload (or the server's request timeout) closes the request without an end: the
  // reader must fail, or the upload's transaction would wait for rows forever.
  body.on('close', () => {
    if (!body.readableEnded) target.destroy(new Error('The upload was interrupted'));
  });
  if (body.errored || (body.destroyed && !body.readableEnded)) {
    const failed = body.errored ?? new Error('The upload was interrupted');
    clearTimeout(idle);
    process.nextTick(() => target.destroy(failed));
    return stop;
  }
  body.pipe(counter).pipe(target);
  return stop;
}

export function parseUpload(body: Readable, options: UploadOptions): UploadSource {
  return options.kind === 'csv' ? csvSource(body, options) : plainSource(body, options);
}

function plainSource(body: Readable, options: UploadOptions): UploadSource {
  const text = new PassThrough();
  const stop = feed(body, options.maxBytes, text);
  async function* entries(): AsyncGenerator<ListEntry> {
    try {
      for await (const line of lines(text)) {
        if (line.trim() === '') continue;
        yield { email: line, fields: [line] };
      }
    } finally {
      stop();
    }
  }
  return { entries: entries(), columns: () => ['email'] };
}

/**
 * The lines of a UTF-8 stream (a BOM dropped), ended by LF, CRLF or a lone CR (old Mac files), as csv-parse reads
 * them; a read error ends the iteration with that error. Only the text that arrived since the last chunk is searched
 * for line ends: searching the whole pending line again on each chunk made one long line cost quadratic time (a
 * 10 MB line held the event loop for seconds).
 */
const LINE_END = /\r\n|\n|\r/g;

export async function* lines(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let line = '';
  // A CR that ended the last chunk: the first half of a CRLF, or a line end of its own.
  let heldCr = false;
  let first = true;
  function* cut(text: string, last: boolean): Generator<string> {
    if (heldCr) text = `\r${text}`;
    heldCr = false;
    let start = 0;
    for (const match of text.matchAll(LINE_END)) {
      if (!last && match[0] === '\r' && match.index === text.length - 1) {
        heldCr = true;
        break;
      }
      yield line + text.slice(start, match.index);
      line = '';
      start = match.index + match[0].length;
    }
    line += text.slice(start, heldCr ? -1 : undefined);
  }
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let text = decoder.write(chunk);
    if (first && text.length > 0) {
      text = text.replace(/^\uFEFF/, '');
      first = false;
    }
    yield* cut(text, false);
  }
  yield* cut(decoder.end(), true);
  if (line.length > 0) yield line;
}

function csvSource(body: Readable, options: UploadOptions): UploadSource {
  let columns: string[] | null = null;
  const parser = parse({
    bom: true,
    // Named, not discovered: until it has found the first line end, csv-parse allocates a Buffer per character
    // read (10 s of event loop for a 20 MB first line). The same ends as lines() reads.
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
  });
  const stop = feed(body, options.maxBytes, parser);

  async function* entries(): AsyncGenerator<ListEntry> {
    let index: number | null = null;
    let headerOnly: string[] | null = null;
    try {
      for await (const record of parser as AsyncIterable<string[]>) {
        if (index === null && headerOnly === null) {
          const decided = decideFirst(record, options.emailColumn);
          columns = decided.header ?? record.map((_, k) => `column_${k + 1}`);
          if (decided.index === null) {
            headerOnly = record; // a header without a recognisable name: the first data row decides
            continue;
          }
          index = decided.index;
          if (decided.header) continue;
        } else if (index === null) {
          index = record.findIndex(looksLikeAddress);
          if (index < 0) throw noColumn();
        }
        yield { email: record[index] ?? '', fields: record };
      }
    } catch (err) {
      // Every parse error of csv-parse is a CsvError; not every code starts with CSV_ (INVALID_OPENING_QUOTE).
      if (err instanceof CsvError) throw new ValidationError(`Malformed CSV: ${quoteShort(err.message)}`);
      throw err;
    } finally {
      stop();
    }
  }
  return { entries: entries(), columns: () => columns };
}

/** csv-parse quotes the offending field in its message: at most a short prefix of it is passed on. */
const quoteShort = (message: string): string =>
  message.length > 200 ? `${message.slice(0, 200)}…` : message;

const noColumn = () =>
  new ValidationError('No column of addresses found; name it with the email_column query parameter');

/** Whether the first record is a header, and which column holds the addresses (null: look at the next record). */
function decideFirst(
  first: string[],
  emailColumn: string | undefined,
): { header: string[] | null; index: number | null } {
  const wanted = emailColumn?.trim();
  if (wanted && /^\d+$/.test(wanted)) {
    const index = Number(wanted) - 1;
    if (index < 0 || index >= first.length)
      throw new ValidationError(
        `email_column ${wanted} is not a column of this upload (1 to ${first.length})`,
      );
    return { header: looksLikeAddress(first[index]) ? null : first, index };
  }
  if (wanted) {
    const index = first.findIndex((h) => h.trim().toLowerCase() === wanted.toLowerCase());
    if (index < 0) throw new ValidationError(`email_column: no column named "${wanted}" in the header row`);
    return { header: first, index };
  }
  const address = first.findIndex(looksLikeAddress);
  if (address >= 0) return { header: null, index: address };
  const named = first.findIndex(isEmailHeader);
  return { header: first, index: named >= 0 ? named : null };
}
