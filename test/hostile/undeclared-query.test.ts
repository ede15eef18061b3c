import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp, type HttpApp } from '../../services/http/server.js';
import { createLogger } from '../../shared/logger.js';
import { expectErrorBody } from './support.js';

// Unknown query parameter names are ignored, and the validator drops them: a handler that passes its whole query on
// to a repository cannot forward a name it never validated (one such route reached SQL with an unchecked value).
describe('query parameters a route does not declare', () => {
  let app: HttpApp;

  beforeAll(async () => {
    app = createHttpApp(
      { bodyLimitBytes: 1 << 20, trustProxy: false, requestTimeoutMs: 120_000 },
      createLogger('silent'),
    );
    const echo = async (request: { query: unknown }) => ({ query: request.query });
    app.get('/open', { schema: { querystring: Type.Object({ page: Type.Optional(Type.Integer()) }) } }, echo);
    app.get(
      '/closed',
      {
        schema: {
          querystring: Type.Object({ page: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
        },
      },
      echo,
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it('are left out of what the handler sees, declared ones kept and coerced', async () => {
    const res = await app.inject('/open?page=3&category=abc&_=123&__proto__=1&constructor=2');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ query: { page: 3 } });
  });

  it('are still refused where a schema says so', async () => {
    expect(expectErrorBody(await app.inject('/closed?page=3&other=1'), 400)).toContain('other');
    expect((await app.inject('/closed?page=3')).json()).toEqual({ query: { page: 3 } });
  });

  it('do not make a declared parameter valid', async () => {
    expectErrorBody(await app.inject('/open?page=abc&other=1'), 400);
  });
});
