import net from 'node:net';
import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** Sends raw bytes and returns the raw response: for what the HTTP parser rejects before Fastify routes it. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    socket.setTimeout(5000, () => reject(new Error('no response')));
    socket.on('data', (chunk) => (response += chunk.toString()));
    socket.on('end', () => resolve(response));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('the HTTP layer', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let port: number;

  beforeAll(async () => {
    runtime = await createTestRuntime({ BODY_LIMIT_BYTES: '2048', RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    // Test-only routes, registered here rather than in the source.
    app.post(
      '/test/echo',
      { schema: { body: Type.Object({ n: Type.Integer({ minimum: 1 }) }) } },
      async (req) => req.body,
    );
    app.get('/test/item/:id', async (req) => req.params);
    app.get('/test/boom', async () => {
      throw new Error('database password is hunter2');
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('answers an unknown route with the error body', async () => {
    const res = await app.inject('/api/no-such-thing?x=1');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'No route for GET /api/no-such-thing', code: 404 });
  });

  it('turns schema violations, bad JSON, oversized and unsupported bodies into 4xx error bodies', async () => {
    const invalid = await app.inject({ method: 'POST', url: '/test/echo', payload: { n: 0 } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({
      error: true,
      code: 400,
      message: expect.stringContaining('must be >= 1'),
    });

    const badJson = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"n":',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toMatchObject({ error: true, code: 400 });

    const tooLarge = await app.inject({
      method: 'POST',
      url: '/test/echo',
      payload: { n: 1, pad: 'x'.repeat(4096) },
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ error: true, code: 413 });

    const unsupported = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'text/xml' },
      payload: '<n/>',
    });
    expect(unsupported.statusCode).toBe(415);
    expect(unsupported.json()).toMatchObject({ error: true, code: 415 });
  });

  it('answers router-level rejections (bad escapes, oversized path parameters) with the error body', async () => {
    const badEscape = await app.inject('/test/item/%E0%A4%A');
    expect(badEscape.statusCode).toBe(400);
    expect(badEscape.json()).toEqual({ error: true, message: 'Malformed URL', code: 400 });
    const long = await app.inject(`/test/item/${'a'.repeat(1200)}`);
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: true, message: 'URI Too Long', code: 414 });
  });

  it('hides the message of an unexpected error behind a generic 500', async () => {
    const res = await app.inject('/test/boom');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: true, message: 'Internal server error', code: 500 });
    expect(res.body).not.toContain('hunter2');
  });

  it('gives every response a request id, keeping a sane one from the caller', async () => {
    const generated = await app.inject('/health');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await app.inject({ url: '/health', headers: { 'x-request-id': 'edge-123' } });
    expect(kept.headers['x-request-id']).toBe('edge-123');
    const replaced = await app.inject({ url: '/health', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers['x-request-id']).not.toBe('bad id with spaces');
  });

  it('answers a malformed request line with the error body', async () => {
    const raw = await rawRequest(port, 'GARBAGE\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect(bodyOf(raw)).toEqual({ error: true, message: 'Bad Request', code: 400 });
  });

  it('answers oversized headers with 431 and the error body', async () => {
    const raw = await rawRequest(
      port,
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 431/);
    expect(bodyOf(raw)).toEqual({ error: true, message: 'Request Header Fields Too Large', code: 431 });
  });

  it('reports readiness of PostgreSQL and Redis', async () => {
    const res = await app.inject('/ready');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ready',
      dependencies: { postgres: 'ok', redis: 'ok' },
      search_index: 'gin',
    });
  });
});
