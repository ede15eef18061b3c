import { isDeepStrictEqual } from 'node:util';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { rateLimitDocumentation, type OpenApiDocument, type Operation } from './openapi-headers.js';

/**
 * The OpenAPI 3.1 document of a service, generated from its route schemas, served as JSON with a Swagger UI page.
 *
 * Named components: every schema with a `title` (`Type.Object({...}, { title: 'Question' })`) becomes
 * `#/components/schemas/<title>` and each use of it a `$ref`; two different schemas with one title are a mistake and
 * fail the document. Every operation gets an operationId (the route's own `schema.operationId`, else one derived
 * from method and path). Only the routes `documented` accepts appear (never the panel, probes or catch-alls).
 */
export interface OpenApiOptions {
  info: { title: string; version: string; description: string };
  /** Where the JSON document is served, e.g. /api/openapi.json. */
  documentPath: string;
  /** Where the Swagger UI page is served, e.g. /api/docs. */
  docsPath: string;
  /** Route URL prefix stripped from derived operationIds ('/api'). */
  operationIdPrefix?: string;
  securitySchemes: Record<string, unknown>;
  /** Security every operation needs unless it says otherwise. */
  security?: Record<string, string[]>[];
  documented: (url: string) => boolean;
  /** The WWW-Authenticate challenge of a 401 (services/http/conveniences.ts); documents that 401. */
  challenge?: string;
  /** Responses carry X-RateLimit-* headers, and 429 with Retry-After is a possible answer. */
  rateLimited: boolean;
  /** 200 answers of GET carry a weak ETag (services/http/etag.ts) for these route URLs. */
  etag?: (url: string) => boolean;
  /** Extra response headers by "METHOD url status", e.g. Location of a 201. */
  responseHeaders?: Record<string, Record<string, unknown>>;
}

/** Documents and docs pages are never charged to a caller's rate limit (services/http/rate-limit.ts). */
export const DOCUMENTATION_ROUTES = ['/api/docs', '/api/openapi.json', '/docs', '/openapi.json'];

const words = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean);
const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** GET /api/questions/:id/answers -> getQuestionsByIdAnswers; POST /api/poll-vote.php -> postPollVote. */
export function operationIdFor(method: string, url: string, prefix = ''): string {
  const path = url.startsWith(prefix) ? url.slice(prefix.length) : url;
  const parts = path
    .replace(/\.php$/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) =>
      segment.startsWith(':') || segment.startsWith('{')
        ? `By${words(segment).map(capitalised).join('')}`
        : words(segment).map(capitalised).join(''),
    );
  return method.toLowerCase() + parts.join('');
}

const isSchemaLike = (node: Record<string, unknown>) =>
  ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'items'].some((k) => k in node);

/**
 * Walks the document bottom-up: titled schemas move to components (their uses become $refs), enums of strings
 * get `type: string` (otherwise generators type them as any).
 */
function extractComponents(node: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => extractComponents(item, components));
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    // Data, not schemas: a default or an example is copied as it is.
    out[key] = ['default', 'example', 'examples', 'enum', 'const'].includes(key)
      ? value
      : extractComponents(value, components);
  }
  if (!isSchemaLike(out)) return out;
  if (Array.isArray(out.enum) && out.type === undefined && out.enum.every((v) => typeof v === 'string'))
    out.type = 'string';
  if (typeof out.title !== 'string') return out;
  const name = out.title;
  const known = components[name];
  if (known === undefined) components[name] = out;
  else if (!isDeepStrictEqual(known, out))
    throw new Error(`OpenAPI: two different schemas are named ${name}; give one of them another title`);
  return { $ref: `#/components/schemas/${name}` };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function operationsOf(document: OpenApiDocument): [string, string, Operation][] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => [path, method, operation as Operation] as [string, string, Operation]),
  );
}

/** A query parameter with a default may be left out: it is not required, whatever the schema's `required` says. */
function optionalDefaults(operation: Operation): void {
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false;
  }
}

const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export function finishDocument(document: OpenApiDocument, options: OpenApiOptions): OpenApiDocument {
  const components: Record<string, unknown> = {};
  const paths = extractComponents(document.paths ?? {}, components) as OpenApiDocument['paths'];
  const finished: OpenApiDocument = {
    ...document,
    paths,
    components: {
      ...document.components,
      schemas: { ...document.components?.schemas, ...components },
    },
  };
  const operationIds = new Set<string>();
  for (const [path, method, operation] of operationsOf(finished)) {
    operation.operationId ??= operationIdFor(method, path, options.operationIdPrefix);
    // One route may serve several methods with one schema (and so one explicit id): ids must stay unique.
    if (operationIds.has(operation.operationId)) operation.operationId += capitalised(method);
    operationIds.add(operation.operationId);
    optionalDefaults(operation);
    rateLimitDocumentation(operation, {
      rateLimited: options.rateLimited,
      challenge: options.challenge,
      etag: method === 'get' && (options.etag?.(path) ?? false),
      extra: Object.fromEntries(
        Object.entries(options.responseHeaders ?? {})
          .filter(([key]) => {
            const [m, url] = key.split(' ');
            return m?.toLowerCase() === method && url !== undefined && toOpenApiPath(url) === path;
          })
          .map(([key, headers]) => [key.split(' ')[2]!, headers]),
      ),
    });
  }
  return finished;
}

export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: options.info,
      components: { securitySchemes: options.securitySchemes as never },
      ...(options.security ? { security: options.security } : {}),
    },
    // Catch-alls (the panel's /admin/*, CORS preflight's *) would leak methods and paths OpenAPI cannot express.
    transform: ({ schema, url }) =>
      !options.documented(url) || url.includes('*')
        ? { schema: { ...schema, hide: true } as never, url }
        : { schema, url },
    transformObject: (documentObject) =>
      finishDocument((documentObject as { openapiObject: OpenApiDocument }).openapiObject, options) as never,
  });
  await app.register(swaggerUi, { routePrefix: options.docsPath, staticCSP: true });
  app.get(options.documentPath, { schema: { hide: true } }, async () => app.swagger());
}
