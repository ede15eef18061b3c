import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishDocument } from '../../services/http/openapi.js';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};
type Operation = {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[];
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Record<string, unknown> }> }
  >;
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );

describe('the OpenAPI documents and docs pages of both services', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let qaDoc: Doc;
  let verifyDoc: Doc;

  beforeAll(async () => {
    // Rate limits on, at the defaults: the docs pages must not spend the anonymous budget.
    runtime = await createTestRuntime();
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
    qaDoc = (await qa.inject('/api/openapi.json')).json();
    verifyDoc = (await verify.inject('/openapi.json')).json();
  });
  afterAll(async () => {
    await qa.close();
    await verify.close();
    await runtime.close();
  });

  it('are valid OpenAPI 3.1 documents (checked by swagger-parser against the specification)', async () => {
    for (const doc of [qaDoc, verifyDoc]) {
      expect(doc.openapi).toBe('3.1.0');
      // validate() dereferences in place: give it a copy.
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
      const paths = Object.keys(doc.paths);
      expect(paths.filter((p) => p.includes('*') || p.startsWith('/admin'))).toEqual([]);
      for (const { method } of operations(doc)) expect(HTTP_METHODS).toContain(method);
    }
  });

  it('gives every operation a unique operationId', () => {
    for (const doc of [qaDoc, verifyDoc]) {
      const ids = operations(doc).map(({ operation }) => operation.operationId);
      expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
      expect(new Set(ids).size).toBe(ids.length);
    }
    expect(qaDoc.paths['/api/questions']!.get!.operationId).toBe('getQuestions');
    expect(verifyDoc.paths['/bulk-verify']!.post!.operationId).toBe('postBulkVerify');
  });

  it('names the resources as components and refers to them', () => {
    expect(Object.keys(qaDoc.components.schemas)).toEqual(
      expect.arrayContaining(['Question', 'Answer', 'User', 'Tag', 'Category', 'Pagination', 'Error']),
    );
    expect(Object.keys(verifyDoc.components.schemas)).toEqual(
      expect.arrayContaining(['VerificationResult', 'Error']),
    );
    const list = qaDoc.paths['/api/questions']!.get!.responses['200']!.content!['application/json']!.schema;
    expect(list).toMatchObject({
      properties: {
        data: {
          properties: {
            questions: { items: { $ref: '#/components/schemas/Question' } },
            pagination: { $ref: '#/components/schemas/Pagination' },
          },
        },
      },
    });
    expect(
      qaDoc.paths['/api/questions']!.get!.responses['4XX']!.content!['application/json']!.schema,
    ).toEqual({
      $ref: '#/components/schemas/Error',
    });
    const verified = verifyDoc.paths['/verify']!.post!.responses['200']!.content!['application/json']!.schema;
    expect(verified).toMatchObject({
      properties: { data: { $ref: '#/components/schemas/VerificationResult' } },
    });
  });

  it('marks parameters with a default as optional and types enums', () => {
    const parameters = qaDoc.paths['/api/questions']!.get!.parameters!;
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    for (const name of ['page', 'limit', 'sort']) expect(byName[name]!.required, name).toBe(false);
    expect(byName.sort!.schema).toMatchObject({
      type: 'string',
      enum: ['newest', 'votes', 'views', 'unanswered'],
    });
    for (const { path, operation } of operations(qaDoc)) {
      for (const p of operation.parameters ?? []) {
        if (p.schema.default !== undefined) expect(p.required, `${path} ${p.name}`).toBe(false);
        if (Array.isArray(p.schema.enum)) expect(p.schema.type, `${path} ${p.name}`).toBeDefined();
      }
    }
  });

  it('documents the response headers: rate limits, Retry-After, WWW-Authenticate, ETag and Location', () => {
    const list = qaDoc.paths['/api/questions']!.get!.responses;
    expect(Object.keys(list['200']!.headers!)).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'ETag']),
    );
    expect(Object.keys(list['429']!.headers!)).toContain('Retry-After');
    expect(list['304']).toBeDefined();
    expect(list['401']!.headers!['WWW-Authenticate']).toBeDefined();
    expect(Object.keys(qaDoc.paths['/api/questions']!.post!.responses['201']!.headers!)).toContain(
      'Location',
    );
    const bulk = verifyDoc.paths['/bulk-verify']!.post!.responses;
    expect(Object.keys(bulk['200']!.headers!)).toContain('X-RateLimit-Remaining');
    expect(bulk['200']!.headers!.ETag).toBeUndefined();
    expect(bulk['429']).toBeDefined();
    expect(bulk['401']!.headers!['WWW-Authenticate']).toBeDefined();
    expect((verifyDoc as unknown as { security: unknown }).security).toEqual([{ apiKey: [] }]);
  });

  it('serves a docs page for each service, and neither page nor document is charged to the rate limit', async () => {
    for (const [app, page, document] of [
      [qa, '/api/docs/', '/api/openapi.json'],
      [verify, '/docs/', '/openapi.json'],
    ] as const) {
      const html = await app.inject(page);
      expect(html.statusCode).toBe(200);
      expect(html.headers['content-type']).toMatch(/text\/html/);
      // Everything the page loads from the service, as a browser would.
      const assets = [...html.body.matchAll(/(?:src|href)="\.?\/?([^"]+)"/g)].map((m) => `${page}${m[1]}`);
      expect(assets.length).toBeGreaterThan(0);
      for (const url of [...assets, document, `${page}json`]) {
        const res = await app.inject(url);
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['x-ratelimit-remaining'], url).toBeUndefined();
      }
    }
    // The first counted request of this client still finds its whole hourly budget (60) less itself.
    const counted = await qa.inject('/api/categories');
    expect(counted.headers['x-ratelimit-limit']).toBe('60');
    expect(counted.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('refuses two different schemas under one component name', () => {
    const one = { type: 'object', title: 'Thing', properties: { a: { type: 'string' } } };
    const other = { type: 'object', title: 'Thing', properties: { b: { type: 'string' } } };
    const doc = (schemas: unknown[]) => ({
      openapi: '3.1.0',
      paths: Object.fromEntries(
        schemas.map((schema, i) => [
          `/p${i}`,
          { get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } } } },
        ]),
      ),
    });
    const options = {
      info: { title: 't', version: '1', description: '' },
      documentPath: '/d.json',
      docsPath: '/d',
      securitySchemes: {},
      documented: () => true,
      rateLimited: false,
    };
    expect(Object.keys(finishDocument(doc([one, { ...one }]), options).components!.schemas!)).toEqual([
      'Thing',
    ]);
    expect(() => finishDocument(doc([one, other]), options)).toThrow(/two different schemas are named Thing/);
  });
});
