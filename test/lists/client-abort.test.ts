import { sql } from 'drizzle-orm';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { UPLOAD_SLOTS } from '../../services/verify/lists/upload-slots.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import type { VerifyApp } from './helpers.js';

// A client that goes away half-way through an upload is not a server fault: it is logged once as a client abort,
// never as an error or a 5xx, over a real socket against the real service.

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  res?: { statusCode?: number };
  code?: number;
}

let runtime: TestRuntime;
let app: VerifyApp;
let key: string;
let port: number;
const lines: LogLine[] = [];

beforeAll(async () => {
  runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', VERIFY_LIST_MAX_BYTES: '100000' });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  app = await buildVerifyApp({ ...runtime, logger: pino({ level: 'info' }, sink) });
  key = (await createKeys(runtime, { verify: ['verify'] })).verify!;
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

const openTransactions = async () => {
  const [row] = await runtime.database.query<{ open: number }>(
    sql`SELECT count(*)::int AS open FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'idle in transaction'`,
  );
  return row!.open;
};

const until = async (check: () => boolean | Promise<boolean>) => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
};

/** Sends the head of an upload and half its body; the caller destroys the socket. */
async function startUpload(type: string, framing: 'length' | 'chunked'): Promise<Socket> {
  const half = 'email\n' + Array.from({ length: 200 }, (_, k) => `user${k}@example.test\n`).join('');
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  const framingHeader =
    framing === 'length' ? `Content-Length: ${Buffer.byteLength(half) * 2}` : 'Transfer-Encoding: chunked';
  socket.write(
    `POST /lists HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Type: ${type}\r\n${framingHeader}\r\n\r\n` +
      (framing === 'length' ? half : `${Buffer.byteLength(half).toString(16)}\r\n${half}\r\n`),
  );
  return socket;
}

describe('an upload whose client goes away', () => {
  it.each([
    ['text/csv', 'length'],
    ['text/plain', 'chunked'],
  ] as const)('%s with %s framing: one client-abort line, no error, no 5xx', async (type, framing) => {
    const before = lines.length;
    // Mid-body: the upload's transaction is open and waiting for the rest of the rows.
    const socket = await startUpload(type, framing);
    await until(async () => (await openTransactions()) > 0);
    socket.destroy();
    // The request's last line: the abort, or what used to be logged instead (a 503 warning, a 500 error).
    await until(() => lines.slice(before).some((l) => l.msg !== 'incoming request'));
    await until(async () => (await openTransactions()) === 0);
    const logged = lines.slice(before);
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
    expect(logged.filter((l) => (l.res?.statusCode ?? 0) >= 500 || (l.code ?? 0) >= 500)).toEqual([]);
    expect(logged.filter((l) => l.msg === 'request abandoned by the client')).toHaveLength(1);
  });

  // The body is gone before the handler reads a byte of it: the upload fails as 'interrupted', without a code.
  it('waiting for an upload slot: each upload logged once as a client abort', async () => {
    const before = lines.length;
    const holders = [];
    for (let k = 0; k < UPLOAD_SLOTS; k++) holders.push(await startUpload('text/csv', 'length'));
    await until(async () => (await openTransactions()) === UPLOAD_SLOTS);
    const waiting = await startUpload('text/csv', 'length');
    const incoming = () => lines.slice(before).filter((l) => l.msg === 'incoming request').length;
    await until(() => incoming() === UPLOAD_SLOTS + 1);
    waiting.destroy();
    for (const socket of holders) socket.destroy();
    await until(
      () => lines.slice(before).filter((l) => l.msg !== 'incoming request').length === UPLOAD_SLOTS + 1,
    );
    await until(async () => (await openTransactions()) === 0);
    const logged = lines.slice(before);
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
    expect(logged.filter((l) => (l.res?.statusCode ?? 0) >= 500 || (l.code ?? 0) >= 500)).toEqual([]);
    expect(logged.filter((l) => l.msg === 'request abandoned by the client')).toHaveLength(UPLOAD_SLOTS + 1);
  });
});
