import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';

// Found by bench/fuzz-http.ts (raw-wire, --seed 12 --rate-limits on): a request refused before its body (401), whose
// headers and malformed chunked body arrive in one packet, got no answer at all: the parser's error closed the
// socket while the 401 was still in its onSend hooks. Only the wire shows it.

let runtime: TestRuntime;
let app: Awaited<ReturnType<typeof buildVerifyApp>>;
let key: string;
let port: number;

beforeAll(async () => {
  runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'true' });
  app = await buildVerifyApp(runtime);
  key = (await createKeys(runtime, { verify: ['verify'] })).verify!;
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

/** Writes the bytes at once and reads until the server closes the connection. */
const exchange = (bytes: string) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(data));
    socket.write(bytes);
  });

const statusAndBody = (answer: string) => {
  const split = answer.indexOf('\r\n\r\n');
  expect(split, JSON.stringify(answer)).toBeGreaterThan(0);
  return { status: Number(answer.split(' ')[1]), body: JSON.parse(answer.slice(split + 4)) as unknown };
};

describe('a chunked body whose data does not match its chunk size', () => {
  it.each([
    ['/bulk-verify', '2\r\n{}0\r\n\r\n'],
    ['/lists', '2\r\n{}0\r\n\r\n'],
    ['/lists', '3\r\n{}\r\n0\r\n\r\n'],
  ])('POST %s %j: 401 without a key, 400 with one, each with the error body', async (path, body) => {
    const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n`;
    const refused = statusAndBody(await exchange(`${head}\r\n${body}`));
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: true, code: 401 });
    const malformed = statusAndBody(await exchange(`${head}X-API-Key: ${key}\r\n\r\n${body}`));
    expect(malformed).toEqual({ status: 400, body: { error: true, code: 400, message: 'Bad Request' } });
  });
});
