import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../shared/db/client.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { ndjsonStream } from '../../services/verify/lists/output.js';
import { databaseUrl } from '../support/postgres.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { createKeys } from '../verify-service/helpers.js';
import { expectError, get, type VerifyApp } from './helpers.js';

// A results download is several keyset reads; one of them may meet PostgreSQL away (a restart, a failover). A short
// outage must cost a pause, a long one an unfinished stream that the client resumes with after_row.

const ROWS = 2500;
const LIST = 'resumeresumeresumeresume';

let runtime: TestRuntime;
let app: VerifyApp;
let key: string;

beforeAll(async () => {
  runtime = await createTestRuntime();
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
  // A finished list of ROWS rows, written the way the list workers leave one (its counters beside its results).
  await runtime.database.query(sql`
    INSERT INTO verification_lists (id, user_id, key_id, status, total, unique_count, processed, valid_count, columns)
    SELECT ${LIST}, k.user_id, k.id, 'completed', ${ROWS}, ${ROWS}, ${ROWS}, ${ROWS}, '["name","email"]'::jsonb
    FROM api_keys k ORDER BY k.id DESC LIMIT 1`);
  await runtime.database.query(sql`
    INSERT INTO verification_list_rows (list_id, row, email, address, fields, result)
    SELECT ${LIST}, n, 'u' || n || '@example.test', 'u' || n || '@example.test',
           jsonb_build_array('Name, "' || n || '"', 'u' || n || '@example.test'),
           jsonb_build_object('email', 'u' || n || '@example.test', 'status', 'valid', 'score', 100)
    FROM generate_series(1, ${ROWS}) n`);
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

/** A database reached through a proxy that can be taken down (its connections cut, new ones refused) and up. */
async function proxiedDatabase() {
  const target = new URL(databaseUrl(runtime.databaseName));
  let proxy = await startTcpProxy(target, () => ({}));
  let up = true;
  const url = new URL(target);
  url.port = String(proxy.port);
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', maxConnections: 1 });
  const bringUp = async () => {
    proxy = await startTcpProxy(target, () => ({}), Number(url.port));
    up = true;
  };
  return {
    database,
    takeDown() {
      up = false;
      return proxy.close();
    },
    bringUp,
    async close() {
      // Up again first: a pool closed while its server is away waits out its end timeout.
      if (!up) await bringUp();
      await database.close();
      await proxy.close();
    },
  };
}

const rowsOf = (lines: string[]) => lines.map((line) => (JSON.parse(line) as { row: number }).row);
const sequence = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Reads a stream's first line, runs `between`, then reads the rest; what was read, and the error if it ended so. */
async function readAcross(stream: NodeJS.ReadableStream, between: () => void) {
  const lines: string[] = [];
  try {
    for await (const chunk of stream) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      if (lines.length === 1) between();
    }
    return { lines, error: null };
  } catch (error) {
    return { lines, error: error as Error };
  }
}

describe('a results stream when PostgreSQL goes away', () => {
  it('rides out a short outage and delivers every row once, in order', async () => {
    const proxied = await proxiedDatabase();
    try {
      const { lines, error } = await readAcross(ndjsonStream(proxied.database, LIST, null), () => {
        // The first batch is read; the second meets the outage.
        void proxied.takeDown();
        setTimeout(() => void proxied.bringUp(), 1500);
      });
      expect(error).toBeNull();
      expect(rowsOf(lines)).toEqual(sequence(1, ROWS));
    } finally {
      await proxied.close();
    }
  }, 60_000);

  it('ends unfinished after a longer outage, and after_row gives exactly the rest', async () => {
    const proxied = await proxiedDatabase();
    let read: Awaited<ReturnType<typeof readAcross>>;
    try {
      read = await readAcross(ndjsonStream(proxied.database, LIST, null, { retryWindowMs: 500 }), () => {
        void proxied.takeDown();
      });
    } finally {
      await proxied.close();
    }
    expect(read.error).not.toBeNull();
    const before = rowsOf(read.lines);
    expect(before).toEqual(sequence(1, 1000));

    const rest = await get(app, key, `/lists/${LIST}/results?format=ndjson&after_row=${before.at(-1)}`);
    expect(rest.statusCode).toBe(200);
    expect(rowsOf(rest.body.split('\n').filter(Boolean))).toEqual(sequence(1001, ROWS));
  }, 60_000);
});

describe('after_row', () => {
  it('resumes a CSV without its header, so that the parts join into the whole file', async () => {
    const whole = (await get(app, key, `/lists/${LIST}/results?format=csv`)).body;
    const lines = whole.split('\r\n');
    const head = lines.slice(0, 1 + 1200).join('\r\n') + '\r\n';
    const rest = await get(app, key, `/lists/${LIST}/results?format=csv&after_row=1200`);
    expect(rest.statusCode).toBe(200);
    expect(rest.body.startsWith('"Name, ""1201"""')).toBe(true);
    expect(head + rest.body).toBe(whole);
  });

  it('is the whole stream at 0 and an empty one past the last row', async () => {
    const all = await get(app, key, `/lists/${LIST}/results?format=ndjson&after_row=0`);
    expect(rowsOf(all.body.split('\n').filter(Boolean))).toEqual(sequence(1, ROWS));
    const none = await get(app, key, `/lists/${LIST}/results?format=ndjson&after_row=${ROWS}`);
    expect(none.statusCode).toBe(200);
    expect(none.body).toBe('');
    const header = await get(app, key, `/lists/${LIST}/results?format=csv&after_row=0`);
    expect(header.body).toMatch(/^name,email,status,/);
  });

  it.each(['-1', '1.5', '2147483648', 'Infinity', 'abc', ''])(
    'answers 400 for after_row=%s',
    async (value) => {
      const res = await get(app, key, `/lists/${LIST}/results?format=ndjson&after_row=${value}`);
      expectError(res, 400, /after_row/);
    },
  );

  it('is refused with format=json, which pages instead', async () => {
    const res = await get(app, key, `/lists/${LIST}/results?after_row=10`);
    expectError(res, 400, /page and limit/);
  });
});
