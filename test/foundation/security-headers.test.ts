import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import helmet from 'helmet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityHeadersPlugin } from '../../services/http/security-headers.js';

/** The headers an answer carries, but those of the transport and the body. */
function securityOf(headers: Headers | Record<string, unknown>): Record<string, string> {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  const skip = new Set([
    'date',
    'connection',
    'keep-alive',
    'content-length',
    'content-type',
    'transfer-encoding',
  ]);
  return Object.fromEntries(
    entries
      .filter(([name]) => !skip.has(name.toLowerCase()))
      .map(([name, value]) => [name.toLowerCase(), String(value)]),
  );
}

describe('security headers', () => {
  let server: Server;
  let helmets: string;

  beforeAll(async () => {
    // Helmet itself, as a plain Node server's middleware: what the services must send.
    const middleware = helmet({ contentSecurityPolicy: false });
    server = createServer((req, res) => middleware(req, res, () => res.end('ok')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    helmets = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("are helmet's, learned once, on answers, errors and unknown routes alike", async () => {
    const expected = securityOf((await fetch(helmets)).headers);
    expect(expected['x-content-type-options']).toBe('nosniff');
    expect(Object.keys(expected).length).toBeGreaterThan(8);

    const app = Fastify();
    await app.register(securityHeadersPlugin);
    app.get('/ok', async () => ({ ok: true }));
    app.get('/fails', async () => {
      throw new Error('boom');
    });
    for (const url of ['/ok', '/fails', '/nowhere']) {
      const res = await app.inject({ url });
      expect({ url, headers: securityOf(res.headers) }).toEqual({ url, headers: expected });
    }
    await app.close();
  });
});
