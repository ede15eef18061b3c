import formbody from '@fastify/formbody';
import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp, type HttpApp } from '../../services/http/server.js';
import { createLogger } from '../../shared/logger.js';
import { expectErrorBody } from './support.js';

// Numbers in a query, a path or a form are text, and Ajv's coercion takes any text JavaScript reads as a number:
// "0x10" was page 16, "1e3" page 1000 and a lone space 0. Only decimal text is a number here.
describe('numbers written as text', () => {
  let app: HttpApp;

  beforeAll(async () => {
    app = createHttpApp(
      { bodyLimitBytes: 1 << 20, trustProxy: false, requestTimeoutMs: 120_000 },
      createLogger('silent'),
    );
    await app.register(formbody);
    const echo = async (request: { query: unknown; params: unknown; body?: unknown }) => ({
      query: request.query,
      params: request.params,
      body: request.body ?? null,
    });
    const query = Type.Object({
      page: Type.Optional(Type.Integer()),
      weight: Type.Optional(Type.Number()),
      ids: Type.Optional(Type.Array(Type.Integer())),
    });
    app.get(
      '/items/:id',
      { schema: { querystring: query, params: Type.Object({ id: Type.Integer() }) } },
      echo,
    );
    app.post('/form', { schema: { body: Type.Object({ choice: Type.Integer() }) } }, echo);
    await app.ready();
  });
  afterAll(() => app.close());

  it('are read when decimal: digits, a minus sign, a fraction where the field takes one', async () => {
    const res = await app.inject('/items/7?page=0012&weight=-2.5&ids=1&ids=2');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      query: { page: 12, weight: -2.5, ids: [1, 2] },
      params: { id: 7 },
      body: null,
    });
  });

  it.each([
    '0x10',
    '1e3',
    '0b11',
    '0o7',
    '+5',
    ' 7',
    '7 ',
    '%20',
    '',
    '1.0',
    '.5',
    '5.',
    'Infinity',
    '1_000',
  ])('refuses page=%j with a 400 that names the field', async (text) => {
    const message = expectErrorBody(await app.inject(`/items/7?page=${text.replace(/ /g, '%20')}`), 400);
    expect(message).toBe('Invalid query: page must be an integer');
  });

  it('refuses non-decimal text in a number field, an array item, a path and a form', async () => {
    expect(expectErrorBody(await app.inject('/items/7?weight=1e2'), 400)).toContain(
      'weight must be a number',
    );
    expect(expectErrorBody(await app.inject('/items/7?ids=1&ids=0x2'), 400)).toContain(
      'ids must be an integer',
    );
    expect(expectErrorBody(await app.inject('/items/0x7'), 400)).toContain('id must be an integer');
    const form = await app.inject({
      method: 'POST',
      url: '/form',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'choice=0x1',
    });
    expect(expectErrorBody(form, 400)).toContain('choice must be an integer');
  });

  it('leaves a JSON body to the strict rules: a number is a number, text is not', async () => {
    const post = (payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/form', headers: { 'content-type': 'application/json' }, payload });
    expect((await post({ choice: 3 })).json()).toMatchObject({ body: { choice: 3 } });
    expectErrorBody(await post({ choice: '3' }), 400);
  });
});
