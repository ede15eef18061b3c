import { StringDecoder } from 'node:string_decoder';
import { PassThrough, Transform, type Readable, type Writable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { ListTooLargeError, type ListEntry } from '../../../shared/lists/create.js';
import { ValidationError } from '../../../shared/errors.js';

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
 * Pipes the request into `target` through a byte counter. Past `maxBytes`, or when the reader stops early, the
 * request is unpiped and drained rather than destroyed, so the error response still reaches the client.
 */
function feed(body: Readable, maxBytes: number, target: Writable & Readable): () => void {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > maxBytes) callback(tooLarge(maxBytes));
      else callback(null, chunk);
    },
  });
  const stop = () => {
    body.unpipe(counter);
    body.resume();
  };
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
  body.pipe(counter).pipe(target);
  return stop;
}

export function parseUpload(body: Readable, options: UploadOptions): UploadSource {
  return options.kind === 'csv' ? csvSource(body, options) : plainSource(body, options);
}

function plainSource(body: Readable, options: UploadOptions): UploadSource {
  async function* entries(): AsyncGenerator<ListEntry> {
    const text = new PassThrough();
    const stop = feed(body, options.maxBytes, text);
    try {
      for await (const raw of lines(text)) {
        const line = raw.replace(/\r$/, '');
        if (line.trim() === '') continue;
        yield { email: line, fields: [line] };
      }
    } finally {
      stop();
    }
  }
  return { entries: entries(), columns: () => ['email'] };
}

/** The lines of a UTF-8 stream (a BOM dropped); a read error ends the iteration with that error. */
async function* lines(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let first = true;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    rest += decoder.write(chunk);
    if (first && rest.length > 0) {
      rest = rest.replace(/^\uFEFF/, '');
      first = false;
    }
    let start = 0;
    let newline: number;
    while ((newline = rest.indexOf('\n', start)) >= 0) {
      yield rest.slice(start, newline);
      start = newline + 1;
    }
    rest = rest.slice(start);
  }
  rest += decoder.end();
  if (rest.length > 0) yield rest;
}

function csvSource(body: Readable, options: UploadOptions): UploadSource {
  let columns: string[] | null = null;

  async function* entries(): AsyncGenerator<ListEntry> {
    const parser = parse({
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_empty_values: true,
    });
    const stop = feed(body, options.maxBytes, parser);
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
