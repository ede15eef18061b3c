import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { lines, parseUpload } from '../../services/verify/lists/upload.js';

// The line readers of list uploads: line ends split across chunks, and one line as long as an upload may be.

const read = async (chunks: (string | Buffer)[]) => {
  const out: string[] = [];
  for await (const line of lines(Readable.from(chunks.map((c) => Buffer.from(c))))) out.push(line);
  return out;
};

describe('lines of a text/plain upload', () => {
  it('finds LF, CRLF and lone CR ends wherever the chunks split them', async () => {
    const text = '\uFEFFa@x.test\r\nb@x.test\rc@x.test\n\né@x.test\r';
    const bytes = Buffer.from(text);
    const expected = ['a@x.test', 'b@x.test', 'c@x.test', '', 'é@x.test'];
    expect(await read([bytes])).toEqual(expected);
    for (let at = 1; at < bytes.length; at++)
      expect(await read([bytes.subarray(0, at), bytes.subarray(at)]), `split at ${at}`).toEqual(expected);
    expect(await read([...bytes].map((b) => Buffer.from([b])))).toEqual(expected);
    expect(await read(['a\r', '\r', '\nb'])).toEqual(['a', '', 'b']);
  });

  // Each chunk used to search the whole pending line again: a 10 MB line took seconds of the event loop, the 64 MiB
  // an upload may hold, minutes. Read in linear time, it is over well within the test's timeout.
  it('reads a line of 64 MiB, sent in 64 KiB chunks', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const chunks = Array.from({ length: 1024 }, () => chunk);
    const out: number[] = [];
    for await (const line of lines(Readable.from([...chunks, Buffer.from('\nb@x.test')])))
      out.push(line.length);
    expect(out).toEqual([64 * 1024 * 1024, 8]);
  }, 30_000);

  // csv-parse allocated a Buffer per character until it had found the first line end: a first line of 64 MiB took
  // about half a minute of the event loop. With the line ends named, a few seconds.
  it('reads a CSV whose first line is 64 MiB, and reads every kind of line end in one file', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const source = parseUpload(Readable.from(Array.from({ length: 1024 }, () => chunk)), {
      kind: 'csv',
      emailColumn: '1',
      maxBytes: 64 * 1024 * 1024,
    });
    for await (const entry of source.entries) expect.unreachable(`a header only, not ${entry.email.length}`);
    expect(source.columns()?.[0]?.length).toBe(64 * 1024 * 1024);

    const mixed = parseUpload(Readable.from([Buffer.from('email\r\na@x.test\rb@x.test\nc@x.test\r\n')]), {
      kind: 'csv',
      emailColumn: undefined,
      maxBytes: 1024,
    });
    const emails: string[] = [];
    for await (const entry of mixed.entries) emails.push(entry.email);
    expect(emails).toEqual(['a@x.test', 'b@x.test', 'c@x.test']);
  }, 20_000);
});
