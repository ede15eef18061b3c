import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';

/**
 * `npm run verify:list -- FILE.csv [--out results.csv] [--key KEY] [--email-column NAME|N] [--name NAME]`
 *
 * Uploads a CSV (or a .txt of one address per line) to the verification service's POST /lists, shows the list's
 * progress (a bar on a terminal, a line per change otherwise), then downloads the results as CSV: the uploaded
 * columns followed by the result fields. VERIFY_URL (default http://localhost:$VERIFY_PORT, 3001) names the service;
 * the key comes from --key or VERIFY_API_KEY; the list is named after the file unless --name says otherwise. A
 * download cut on the way (the connection lost, the service restarting) resumes after the last whole row it wrote.
 * Exit code 0 when the list completed, 1 otherwise.
 */

const USAGE =
  'usage: npm run verify:list -- FILE.csv [--out results.csv] [--key KEY] [--email-column NAME|N] [--name NAME]';
const POLL_MS = 1000;
const REQUEST_TIMEOUT_MS = 30_000;
// An upload or a download of a million rows over a slow link: generous, but never unbounded.
const TRANSFER_TIMEOUT_MS = 30 * 60_000;
// A download resumes this many times, waiting a little longer each time (1, 2, 4 … 30 s).
const DOWNLOAD_ATTEMPTS = 8;

interface List {
  id: string;
  status: string;
  total: number;
  processed: number;
  progress: number;
  counts: Record<'valid' | 'invalid' | 'risky' | 'unknown', number>;
  eta_seconds: number | null;
}

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        out: { type: 'string' },
        key: { type: 'string' },
        'email-column': { type: 'string' },
        name: { type: 'string' },
      },
    });
  } catch (err) {
    return fail(`${(err as Error).message}\n${USAGE}`, 2);
  }
})();
const file = positionals[0];
if (!file || positionals.length > 1) fail(USAGE, 2);
const key = values.key ?? process.env.VERIFY_API_KEY;
if (!key) fail('An API key with the verify scope is needed: --key or VERIFY_API_KEY', 2);
// The service `npm start` runs on this machine: VERIFY_PORT, as the server reads it, unless VERIFY_URL names another.
const base = (process.env.VERIFY_URL || `http://localhost:${process.env.VERIFY_PORT || 3001}`).replace(
  /\/+$/,
  '',
);
const out =
  values.out ?? path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.results.csv`);
try {
  if (!statSync(file).isFile()) fail(`${file} is not a file`, 2);
} catch {
  fail(`${file}: no such file`, 2);
}

async function call(url: string, init: RequestInit = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${base}${url}`, {
      ...init,
      headers: { 'x-api-key': key!, ...(init.headers as Record<string, string>) },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string } }).cause?.code;
    return fail(
      cause === 'ECONNREFUSED'
        ? `${base}${url}: nothing answers there (is the verification service running? Set VERIFY_URL if it listens elsewhere)`
        : `${base}${url}: ${(err as Error).message}${cause ? ` (${cause})` : ''}`,
    );
  }
  if (!res.ok) await failWith(res, `${init.method ?? 'GET'} ${url}`);
  return res;
}

/** Exits with the service's error message for an answer that is not a success. */
async function failWith(res: Response, what: string): Promise<never> {
  const body = (await res.json().catch(() => null)) as { message?: string } | null;
  return fail(`${what}: ${res.status} ${body?.message ?? res.statusText}`);
}

function progressLine(list: List): string {
  const { valid, invalid, risky, unknown } = list.counts;
  const eta = list.eta_seconds === null ? '' : ` eta ${list.eta_seconds}s`;
  return `${list.status} ${list.processed}/${list.total} (${list.progress}%) valid ${valid} invalid ${invalid} risky ${risky} unknown ${unknown}${eta}`;
}

function show(list: List, previous: string | null): string {
  const line = progressLine(list);
  if (process.stdout.isTTY) {
    const width = 30;
    const filled = Math.round((list.progress / 100) * width);
    process.stdout.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${line}\x1b[K`);
  } else if (line !== previous) {
    process.stdout.write(`${line}\n`);
  }
  return line;
}

const query = new URLSearchParams();
// Without --name the list is named after its file, so that GET /lists tells one upload from another.
query.set('name', (values.name ?? path.basename(file)).slice(0, 200));
if (values['email-column']) query.set('email_column', values['email-column']);
const type = /\.txt$/i.test(file) ? 'text/plain' : 'text/csv';
const created = await call(
  `/lists${query.size > 0 ? `?${query}` : ''}`,
  {
    method: 'POST',
    headers: { 'content-type': type },
    body: Readable.toWeb(createReadStream(file)) as unknown as RequestInit['body'],
    duplex: 'half',
  } as RequestInit,
  TRANSFER_TIMEOUT_MS,
);
let list = ((await created.json()) as { data: List }).data;
process.stdout.write(`list ${list.id}: ${list.total} rows\n`);

let previous: string | null = null;
for (;;) {
  previous = show(list, previous);
  if (!['queued', 'running'].includes(list.status)) break;
  await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  list = ((await (await call(`/lists/${list.id}`)).json()) as { data: List }).data;
}
if (process.stdout.isTTY) process.stdout.write('\n');

/**
 * The results as CSV into `out`. Each record is written once it has been read whole, so after a cut the file ends
 * at a row boundary; the next request asks for the rows after that one (`after_row`, the last column) and gets no
 * header. Records are written as the service writes them (csv-stringify, CRLF), so the file is byte for byte the
 * one an uncut download gives.
 */
async function downloadResults(id: string): Promise<void> {
  const file = createWriteStream(out);
  let header = false;
  let lastRow = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(
        `${base}/lists/${id}/results?format=csv${lastRow ? `&after_row=${lastRow}` : ''}`,
        {
          headers: { 'x-api-key': key! },
          signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS),
        },
      );
      // A refusal (4xx) is final; a 5xx is the service restarting or its database away: tried again.
      if (res.status < 500 && !res.ok) await failWith(res, `GET /lists/${id}/results`);
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
      // Records are taken from the parser as soon as each chunk is parsed, so that a cut loses only the row it
      // fell in (a pipeline would drop the parsed rows still buffered when the body fails).
      const parser = parse({ relax_column_count: true });
      let parseError: Error | null = null;
      parser.on('error', (err) => (parseError = err));
      // Without after_row the service starts with the header, which an earlier attempt may have written.
      let repeatedHeader = lastRow === 0 && header;
      const take = async (record: string[]) => {
        if (repeatedHeader) {
          repeatedHeader = false;
          return;
        }
        if (!file.write(stringify([record], { eof: true, record_delimiter: '\r\n' })))
          await once(file, 'drain');
        if (header) lastRow = Number(record[record.length - 1]);
        header = true;
      };
      for await (const chunk of Readable.fromWeb(res.body as ReadableStream)) {
        parser.write(chunk);
        for (let record; (record = parser.read() as string[] | null) !== null;) await take(record);
        if (parseError) throw parseError;
      }
      parser.end();
      for await (const record of parser) await take(record as string[]);
      break;
    } catch (err) {
      if (attempt >= DOWNLOAD_ATTEMPTS) fail(`GET /lists/${id}/results: ${(err as Error).message}`);
      const wait = Math.min(30_000, 1000 * 2 ** (attempt - 1));
      process.stderr.write(
        `results download cut after row ${lastRow} (${(err as Error).message}); resuming in ${wait / 1000}s\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  file.end();
  await once(file, 'finish');
}

await downloadResults(list.id);
process.stdout.write(`results: ${out}\n`);
process.exit(list.status === 'completed' ? 0 : 1);
