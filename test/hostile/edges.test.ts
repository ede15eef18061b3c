import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { buildValidator } from '../../services/http/validation.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { ADMIN_TOKEN, signIn } from '../admin/helpers.js';
import { expectErrorBody } from './support.js';

// Findings of the hostile-input audit of both services run as real processes (a driver walking every OpenAPI route
// with hostile numbers, text, structure and headers): each was a 500 or an answer without the error body.

/** Sends raw bytes over a plain socket and returns the whole answer (the server closes the connection). */
function raw(port: number, request: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split);
      let body = text.slice(split + 4);
      if (/transfer-encoding: chunked/i.test(head)) body = body.split('\r\n')[1] ?? '';
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]), head, body });
    });
    socket.write(request);
  });
}

describe('hostile edges of both services', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let qaPort: number;
  let verifyPort: number;
  let key: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', ADMIN_TOKEN });
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
    await qa.listen({ port: 0, host: '127.0.0.1' });
    await verify.listen({ port: 0, host: '127.0.0.1' });
    qaPort = (qa.server.address() as AddressInfo).port;
    verifyPort = (verify.server.address() as AddressInfo).port;
    key = (await createKeys(runtime, { verify: ['verify'] })).verify!;
  });
  afterAll(async () => {
    await qa?.close();
    await verify?.close();
    await runtime?.close();
  });

  it('an HTTP/1.1 request without Host is a 400 with the error body (Node answered a bare 400 itself)', async () => {
    for (const [port, path] of [
      [qaPort, '/api/questions'],
      [verifyPort, '/lists'],
    ] as const) {
      const answer = await raw(port, `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ error: true, code: 400, message: 'Missing Host header' });
    }
    // The newsletter's routes word it their way (`success: false` as well), not as a 500 of their response schema.
    for (const [method, path] of [
      ['POST', '/api/newsletter-subscribe.php'],
      ['GET', '/api/newsletter/confirm'],
    ]) {
      const answer = await raw(qaPort, `${method} ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        success: false,
        error: true,
        code: 400,
        message: 'Missing Host header',
      });
    }
    // HTTP/1.0 may omit it.
    const old = await raw(qaPort, 'GET /health HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it('an Expect other than 100-continue and a CONNECT get the error body (Node answered a bare 417 / nothing)', async () => {
    for (const port of [qaPort, verifyPort]) {
      const expectation = await raw(
        port,
        'GET /health HTTP/1.1\r\nHost: x\r\nExpect: garbage\r\nConnection: close\r\n\r\n',
      );
      expect(expectation.status).toBe(417);
      expect(JSON.parse(expectation.body)).toMatchObject({ error: true, code: 417 });
      const tunnel = await raw(port, 'CONNECT /api/questions HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(tunnel.status).toBe(405);
      expect(JSON.parse(tunnel.body)).toEqual({
        error: true,
        code: 405,
        message: 'CONNECT is not supported',
      });
    }
  });

  it('GET /lists and /lists/{id}/results: a page past int8 offsets is a 400, not a failed query', async () => {
    for (const page of ['9223372036854775807', '9223372036854775808', '92233720368547758', '1000001']) {
      for (const url of [`/lists?page=${page}`, `/lists/${'a'.repeat(24)}/results?page=${page}`]) {
        const res = await verify.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
        expect(expectErrorBody(res, 400), url).toMatch(/page must be/);
      }
    }
    const fine = await verify.inject({
      method: 'GET',
      url: '/lists?page=1000000',
      headers: { 'x-api-key': key },
    });
    expect(fine.statusCode).toBe(200);
  });

  it('the validator refuses an integer past 2^53 in a query or form, whatever bounds the schema forgot', () => {
    const compile = buildValidator({}) as unknown as (route: object) => (data: unknown) => boolean;
    const validate = compile({
      schema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } },
      method: 'GET',
      url: '/x',
      httpPart: 'querystring',
    }) as ((data: unknown) => boolean) & { errors?: { instancePath: string; keyword: string }[] };
    expect(validate({ n: '9007199254740991' })).toBe(true);
    for (const n of ['9007199254740993', '9223372036854775807', '1e20', 'Infinity']) {
      expect(validate({ n }), n).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ instancePath: '/n' });
    }
  });

  const upload = (body: string, contentType = 'text/csv', query = '') =>
    verify.inject({
      method: 'POST',
      url: `/lists${query}`,
      headers: { 'content-type': contentType, 'x-api-key': key },
      payload: body,
    });

  it.each([
    ['a JSON text as CSV', '{"a":1}\n'],
    ['a quote inside an unquoted field', 'email\na"b@example.test\n'],
    ['an unclosed quote', 'email\n"a@example.test\n'],
    ['an unclosed quote over a long field', `email\n"${'a'.repeat(100_000)}`],
  ])('POST /lists: %s is a 400 "Malformed CSV" with a short message', async (_name, body) => {
    const message = expectErrorBody(await upload(body), 400);
    expect(message).toMatch(/^Malformed CSV: /);
    expect(message.length).toBeLessThan(300);
  });

  it('POST /lists: an address over 1,024 bytes is a 400 naming its position (it cannot be indexed)', async () => {
    const long = 'a'.repeat(2_000_000);
    const cases = [
      await upload(`email\nok@example.test\n${long}\n`),
      await upload(`ok@example.test\n${long}\n`, 'text/plain'),
      await verify.inject({
        method: 'POST',
        url: '/lists',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        payload: JSON.stringify({ emails: ['ok@example.test', `${'é'.repeat(600)}@example.test`] }),
      }),
    ];
    for (const res of cases) {
      expect(expectErrorBody(res, 400)).toBe(
        'Address 2 of the list is longer than 1024 bytes (a valid one has at most 254)',
      );
    }
    // Up to the bound the address is kept, to be judged invalid.
    const kept = await upload(`email\nok@example.test\n${'b'.repeat(1000)}@example.test\n`);
    expect(kept.statusCode, kept.body).toBe(202);
    expect(kept.json().data.total).toBe(2);
  });

  it('the queue board answers with the error body, never its own shape or a 5xx message', async () => {
    const { jar } = await signIn(qa);
    for (const url of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await qa.inject({
        method: 'GET',
        url,
        headers: { ...jar.header, authorization: 'Basic x' },
      });
      expect(expectErrorBody(res, 401), url).toBe('Authorization header must be "Bearer <API key>"');
    }
  });
});
