import { sql } from 'drizzle-orm';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import {
  LIST_CHUNK_ADDRESSES,
  LIST_LANES,
  listChunkJobId,
  listLanes,
} from '../../shared/queues/verify-lists.js';
import { UPLOAD_IDLE_MS } from '../../services/verify/lists/upload.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { expectError, get, jsonList, upload, type VerifyApp } from './helpers.js';

// Creating lists through the HTTP app (no worker runs here, so every list stays queued): JSON and streamed uploads,
// column detection, limits, idempotency and ownership.

let runtime: TestRuntime;
let app: VerifyApp;
let keys: Record<string, string>;
let other: Record<string, string>;

beforeAll(async () => {
  runtime = await createTestRuntime({
    RATE_LIMIT_ENABLED: 'false',
    VERIFY_LIST_MAX_ADDRESSES: '20',
    VERIFY_LIST_MAX_BYTES: '4096',
    // Below the list limit: an upload must not be cut by the service's body limit.
    BODY_LIMIT_BYTES: '1024',
  });
  app = await buildVerifyApp(runtime);
  keys = await createKeys(runtime, { verify: ['verify'], writer: ['qa:write'] });
  other = await createKeys(runtime, { verify: ['verify'] });
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

const rowsOf = (id: string) =>
  runtime.database.query<{ row: number; email: string; fields: string[] | null }>(
    sql`SELECT row, email, fields FROM verification_list_rows WHERE list_id = ${id} ORDER BY row`,
  );

describe('POST /lists with JSON', () => {
  it('answers 202 with Location and the queued list; duplicates (domain in any case) count once', async () => {
    const res = await jsonList(app, keys.verify!, {
      emails: [
        'alice@example.test',
        'Bob@Example.TEST',
        'bob@example.test',
        ' alice@EXAMPLE.test ',
        'not-an-address',
      ],
      name: 'March signups',
    });
    expect(res.statusCode, res.body).toBe(202);
    const list = res.json().data;
    expect(res.headers.location).toBe(`/lists/${list.id}`);
    expect(list.id).toMatch(/^[a-z2-7]{24}$/);
    expect(list).toMatchObject({
      name: 'March signups',
      status: 'queued',
      total: 5,
      unique: 4,
      duplicates: 1,
      processed: 0,
      progress: 0,
      counts: { valid: 0, invalid: 0, risky: 0, unknown: 0 },
      started_at: null,
      completed_at: null,
      eta_seconds: null,
      callback_url: null,
      callback: null,
    });
    const again = await get(app, keys.verify!, `/lists/${list.id}`);
    expect(again.json()).toEqual({ success: true, data: list });
    // Four addresses are one chunk: one chunk job, not one per lane (the others would claim nothing).
    const chunkJobs = (
      await runtime.queues.queue('verify-lists').getJobs(['waiting', 'prioritized', 'delayed'])
    )
      .map((j) => j.id)
      .filter((id) => id?.startsWith(`list-${list.id}-`));
    expect(chunkJobs).toEqual([listChunkJobId(list.id, 0)]);
  });

  it('runs one lane per chunk a list has to give, at most LIST_LANES', () => {
    expect(listLanes(1)).toBe(1);
    expect(listLanes(LIST_CHUNK_ADDRESSES)).toBe(1);
    expect(listLanes(LIST_CHUNK_ADDRESSES + 1)).toBe(2);
    expect(listLanes(LIST_LANES * LIST_CHUNK_ADDRESSES)).toBe(LIST_LANES);
    expect(listLanes(1_000_000)).toBe(LIST_LANES);
  });

  it('refuses a callback_url that leads to a private address (the outbound guard)', async () => {
    const res = await jsonList(app, keys.verify!, {
      emails: ['a@b.test'],
      callback_url: 'http://127.0.0.1:9/hook',
    });
    expectError(res, 400, /^callback_url: /);
  });

  it('refuses bad bodies with the error body', async () => {
    expectError(await jsonList(app, keys.verify!, { emails: [] }), 400, /no addresses/);
    expectError(await jsonList(app, keys.verify!, { emails: 'a@b.test' }), 400, /emails must be an array/);
    expectError(await jsonList(app, keys.verify!, { emails: ['a@b.test', 7] }), 400, /emails\[1\]/);
    expectError(await jsonList(app, keys.verify!, { addresses: [] }), 400, /emails/);
    expectError(
      await jsonList(app, keys.verify!, { emails: ['a@b.test'], callback_url: 'ftp://x.test/' }),
      400,
      /callback_url/,
    );
    expectError(await jsonList(app, keys.verify!, { emails: ['a@b.test'], name: 5 }), 400, /name/);
    // A null name or callback_url is one not given (clients serialise unset optional fields so).
    const nulls = await jsonList(app, keys.verify!, { emails: ['a@b.test'], name: null, callback_url: null });
    expect(nulls.statusCode).toBe(202);
    expect(nulls.json().data).toMatchObject({ name: '', callback_url: null });
    const malformed = await app.inject({
      method: 'POST',
      url: '/lists',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.verify! },
      payload: '{"emails": [',
    });
    expectError(malformed, 400);
  });

  it('answers 413 past VERIFY_LIST_MAX_ADDRESSES and stores nothing', async () => {
    const before = (await get(app, keys.verify!, '/lists?limit=100')).json().data.pagination.total_items;
    const emails = Array.from({ length: 21 }, (_, i) => `u${i}@example.test`);
    expectError(await jsonList(app, keys.verify!, { emails }), 413, /at most 20 addresses/);
    expect((await get(app, keys.verify!, '/lists?limit=100')).json().data.pagination.total_items).toBe(
      before,
    );
  });

  it('needs a key with the verify scope', async () => {
    expectError(
      await app.inject({
        method: 'POST',
        url: '/lists',
        headers: { 'content-type': 'application/json' },
        payload: '{"emails":["a@b.test"]}',
      }),
      401,
    );
    expectError(await jsonList(app, keys.writer!, { emails: ['a@b.test'] }), 403);
    expectError(await get(app, keys.writer!, '/lists'), 403);
  });
});

describe('POST /lists with an upload', () => {
  it('reads a CSV with a BOM, quoted fields and a header, finding the address column by its name', async () => {
    const csv =
      '\uFEFFname,"E-mail address",note\r\n' +
      '"Smith, Ann",alice@example.test,"said ""hi"""\r\n' +
      '"Multi\nline",bob@example.test,=cmd\r\n' +
      '\r\n' +
      'Carol,carol@example.test,\r\n';
    const res = await upload(app, keys.verify!, csv, { query: '?name=crm' });
    expect(res.statusCode, res.body).toBe(202);
    const list = res.json().data;
    expect(list).toMatchObject({ name: 'crm', total: 3, unique: 3 });
    expect(await rowsOf(list.id)).toEqual([
      { row: 1, email: 'alice@example.test', fields: ['Smith, Ann', 'alice@example.test', 'said "hi"'] },
      { row: 2, email: 'bob@example.test', fields: ['Multi\nline', 'bob@example.test', '=cmd'] },
      { row: 3, email: 'carol@example.test', fields: ['Carol', 'carol@example.test', ''] },
    ]);
  });

  it('takes email_column by header name or 1-based index', async () => {
    const csv = 'primary,backup\nalice@example.test,carol@example.test\nbob@example.test,dave@example.test\n';
    const byName = await upload(app, keys.verify!, csv, { query: '?email_column=Backup' });
    expect(byName.statusCode, byName.body).toBe(202);
    expect((await rowsOf(byName.json().data.id)).map((r) => r.email)).toEqual([
      'carol@example.test',
      'dave@example.test',
    ]);

    const byIndex = await upload(app, keys.verify!, csv, { query: '?email_column=2' });
    expect(byIndex.statusCode).toBe(202);
    expect((await rowsOf(byIndex.json().data.id)).map((r) => r.email)).toEqual([
      'carol@example.test',
      'dave@example.test',
    ]);

    // Without a header row, an index names the column and the first row is data.
    const headerless = await upload(app, keys.verify!, 'x,alice@example.test\ny,bob@example.test\n', {
      query: '?email_column=2',
    });
    expect((await rowsOf(headerless.json().data.id)).map((r) => r.row)).toEqual([1, 2]);

    expectError(await upload(app, keys.verify!, csv, { query: '?email_column=3' }), 400, /email_column 3/);
    expectError(
      await upload(app, keys.verify!, csv, { query: '?email_column=mail' }),
      400,
      /no column named "mail"/,
    );
  });

  it('detects the address column by its values, with or without a header', async () => {
    const headerless = await upload(app, keys.verify!, 'Ann,ann@example.test\nBen,ben@example.test\n');
    expect(headerless.statusCode).toBe(202);
    expect(await rowsOf(headerless.json().data.id)).toEqual([
      { row: 1, email: 'ann@example.test', fields: ['Ann', 'ann@example.test'] },
      { row: 2, email: 'ben@example.test', fields: ['Ben', 'ben@example.test'] },
    ]);
    const unnamed = await upload(
      app,
      keys.verify!,
      'who,contact\nAnn,ann@example.test\nBen,ben@example.test\n',
    );
    expect(unnamed.statusCode).toBe(202);
    expect((await rowsOf(unnamed.json().data.id)).map((r) => r.email)).toEqual([
      'ann@example.test',
      'ben@example.test',
    ]);
    expectError(await upload(app, keys.verify!, 'who,what\nAnn,x\n'), 400, /email_column/);
  });

  it('reads text/plain as one address per line', async () => {
    const res = await upload(
      app,
      keys.verify!,
      '\uFEFFalice@example.test\r\n\r\nbob@example.test\nalice@example.test',
      {
        type: 'text/plain',
      },
    );
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data).toMatchObject({ total: 3, unique: 2, duplicates: 1 });
  });

  it('drops NUL characters, which PostgreSQL cannot store, instead of failing', async () => {
    const res = await upload(app, keys.verify!, 'email,note\nal\u0000ice@example.test,a\u0000b\n');
    expect(res.statusCode, res.body).toBe(202);
    expect(await rowsOf(res.json().data.id)).toEqual([
      { row: 1, email: 'alice@example.test', fields: ['alice@example.test', 'ab'] },
    ]);
  });

  it('refuses a malformed CSV with a 400', async () => {
    expectError(await upload(app, keys.verify!, 'email\n"alice@example.test\n'), 400, /Malformed CSV/);
  });

  it('is not cut by BODY_LIMIT_BYTES, and answers 413 past VERIFY_LIST_MAX_BYTES or the row limit', async () => {
    // 19 rows of ~100 bytes: over the 1 KiB body limit of the service, under the 4 KiB list limit.
    const rows = Array.from({ length: 19 }, (_, i) => `user${i}@example.test,${'x'.repeat(80)}`);
    const fits = await upload(app, keys.verify!, `email,pad\n${rows.join('\n')}\n`);
    expect(fits.statusCode, fits.body).toBe(202);
    expect(fits.json().data.total).toBe(19);

    const big = `email,pad\n${Array.from({ length: 60 }, (_, i) => `user${i}@example.test,${'x'.repeat(80)}`).join('\n')}\n`;
    expectError(await upload(app, keys.verify!, big), 413, /4096 bytes/);
    const many = `email\n${Array.from({ length: 21 }, (_, i) => `u${i}@example.test`).join('\n')}\n`;
    expectError(await upload(app, keys.verify!, many), 413, /at most 20 addresses/);
  });

  it('counts the bytes of an upload streamed without a Content-Length', async () => {
    const chunks = Array.from({ length: 60 }, (_, i) => `user${i}@example.test,${'x'.repeat(80)}\n`);
    const res = await app.inject({
      method: 'POST',
      url: '/lists',
      headers: { 'content-type': 'text/csv', 'x-api-key': keys.verify! },
      payload: Readable.from(['email,pad\n', ...chunks]),
    });
    expectError(res, 413, /4096 bytes/);
  });

  it('reads text/plain ended by lone CRs (old Mac files) as it reads CSV', async () => {
    const res = await upload(app, keys.verify!, 'alice@example.test\rbob@example.test\r', {
      type: 'text/plain',
    });
    expect(res.statusCode, res.body).toBe(202);
    expect((await rowsOf(res.json().data.id)).map((r) => r.email)).toEqual([
      'alice@example.test',
      'bob@example.test',
    ]);
  });

  // A body that failed before its rows were read (here: one that does not decompress) used to leave its
  // transaction open for ever, one pooled connection each: ten such requests and every route waited.
  it.each(['text/csv', 'text/plain'])(
    'answers a %s upload that does not decompress with a 400, and keeps its connection',
    async (type) => {
      for (let k = 0; k < 12; k++) {
        const res = await upload(app, keys.verify!, Buffer.from('not gzip at all'), {
          type,
          headers: { 'content-encoding': 'gzip' },
        });
        expect(res.statusCode, res.body).toBe(400);
      }
      const [row] = await runtime.database.query<{ open: number }>(
        sql`SELECT count(*)::int AS open FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'idle in transaction'`,
      );
      expect(row?.open).toBe(0);
      expect((await upload(app, keys.verify!, 'alice@example.test\n', { type })).statusCode).toBe(202);
    },
  );

  it('gives up an upload that stops sending, and its transaction with it', async () => {
    const stalled = new Readable({ read() {} });
    stalled.push('email\nalice@example.test\n');
    const res = await app.inject({
      method: 'POST',
      url: '/lists',
      headers: { 'content-type': 'text/csv', 'x-api-key': keys.verify! },
      payload: stalled,
    });
    expectError(res, 408, new RegExp(`sent nothing for ${UPLOAD_IDLE_MS / 1000} s`));
    stalled.destroy();
  }, 60_000);

  it('answers 415 for another content type', async () => {
    expectError(await upload(app, keys.verify!, 'x', { type: 'application/xml' }), 415);
  });
});

describe('idempotent creation', () => {
  it('returns the same list for a retried Idempotency-Key, per owner', async () => {
    const headers = { 'idempotency-key': 'import-42' };
    const first = await jsonList(app, keys.verify!, { emails: ['a@example.test'] }, headers);
    const retry = await jsonList(app, keys.verify!, { emails: ['a@example.test'] }, headers);
    expect(first.statusCode).toBe(202);
    expect(retry.statusCode).toBe(202);
    expect(retry.json().data.id).toBe(first.json().data.id);
    expect(retry.headers.location).toBe(first.headers.location);
    // Concurrent retries too: one list.
    const racing = await Promise.all(
      [1, 2, 3].map(() =>
        upload(app, keys.verify!, 'email\nb@example.test\n', { headers: { 'idempotency-key': 'race' } }),
      ),
    );
    expect(new Set(racing.map((r) => r.json().data.id)).size).toBe(1);
    // Another owner's key of the same name is another list.
    const theirs = await jsonList(app, other.verify!, { emails: ['a@example.test'] }, headers);
    expect(theirs.json().data.id).not.toBe(first.json().data.id);
  });

  it('refuses with 422 a key sent again with another list or other settings, and creates nothing', async () => {
    const headers = { 'idempotency-key': 'weekly-export' };
    const csv = 'email,name\nc@example.test,Carol\nd@example.test,Dan\n';
    const first = await upload(app, keys.verify!, csv, { headers });
    expect(first.statusCode).toBe(202);
    const before = (await get(app, keys.verify!, '/lists?limit=100')).json().data.pagination.total_items;
    const refused = [
      await upload(app, keys.verify!, 'email,name\nc@example.test,Carol\n', { headers }),
      await upload(app, keys.verify!, 'email,name\nc@example.test,Carol\nd@example.test,Daniel\n', {
        headers,
      }),
      await upload(app, keys.verify!, 'email,who\nc@example.test,Carol\nd@example.test,Dan\n', { headers }),
      await jsonList(app, keys.verify!, { emails: ['c@example.test', 'd@example.test'] }, headers),
    ];
    for (const res of refused) expectError(res, 422, /Idempotency-Key was used for another list/);
    // The same upload again is a retry: the first list.
    const retry = await upload(app, keys.verify!, csv, { headers });
    expect(retry.statusCode).toBe(202);
    expect(retry.json().data.id).toBe(first.json().data.id);
    // Settings count too: a name given on the retry that the first did not have is another request.
    const named = await jsonList(
      app,
      keys.verify!,
      { emails: ['e@example.test'], name: 'March' },
      {
        'idempotency-key': 'named',
      },
    );
    expect(named.statusCode).toBe(202);
    expectError(
      await jsonList(
        app,
        keys.verify!,
        { emails: ['e@example.test'], name: 'April' },
        { 'idempotency-key': 'named' },
      ),
      422,
    );
    const after = (await get(app, keys.verify!, '/lists?limit=100')).json().data.pagination.total_items;
    expect(after).toBe(before + 1);
  });
});

describe('reading lists', () => {
  it("pages the key owner's lists newest first and hides other owners' lists (404)", async () => {
    const owner = await createKeys(runtime, { verify: ['verify'] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await jsonList(app, owner.verify!, { emails: [`n${i}@example.test`], name: `l${i}` })).json().data
          .id,
      );
    const page = await get(app, owner.verify!, '/lists?page=1&limit=2');
    expect(page.statusCode).toBe(200);
    expect(page.json().data.lists.map((l: { id: string }) => l.id)).toEqual([ids[2], ids[1]]);
    expect(page.json().data.pagination).toEqual({
      current_page: 1,
      total_pages: 2,
      total_items: 3,
      per_page: 2,
    });
    const second = await get(app, owner.verify!, '/lists?page=2&limit=2');
    expect(second.json().data.lists.map((l: { id: string }) => l.id)).toEqual([ids[0]]);
    expectError(await get(app, owner.verify!, '/lists?limit=101'), 400);

    for (const url of [
      `/lists/${ids[0]}`,
      `/lists/${ids[0]}/results`,
      '/lists/nosuchlist',
      '/lists/aaaaaaaaaaaaaaaaaaaaaaaa',
    ])
      expectError(await get(app, other.verify!, url), 404, /List not found/);
    expectError(
      await app.inject({
        method: 'DELETE',
        url: `/lists/${ids[0]}`,
        headers: { 'x-api-key': other.verify! },
      }),
      404,
    );
    // Still there for its owner.
    expect((await get(app, owner.verify!, `/lists/${ids[0]}`)).statusCode).toBe(200);
  });

  it('refuses unknown result formats and statuses', async () => {
    const id = (await jsonList(app, keys.verify!, { emails: ['a@example.test'] })).json().data.id;
    expectError(await get(app, keys.verify!, `/lists/${id}/results?format=xml`), 400);
    expectError(await get(app, keys.verify!, `/lists/${id}/results?status=valid,bogus`), 400, /bogus/);
    expectError(await get(app, keys.verify!, `/lists/${id}/results?limit=1001`), 400);
    const empty = await get(app, keys.verify!, `/lists/${id}/results`);
    expect(empty.json()).toEqual({
      success: true,
      data: {
        results: [],
        complete: false,
        pagination: { current_page: 1, total_pages: 0, total_items: 0, per_page: 100 },
      },
    });
  });
});
