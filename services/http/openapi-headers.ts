/** The few OpenAPI shapes the document post-processing touches (everything else passes through untouched). */
export interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: { default?: unknown };
}
export interface Response {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}
export interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  responses?: Record<string, Response>;
  security?: unknown[];
}
export interface OpenApiDocument {
  openapi: string;
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
}

const integer = (description: string) => ({ description, schema: { type: 'integer' } });

/** Sent with every counted response (services/http/rate-limit.ts). */
export const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': integer('Requests allowed in the window that is closest to running out'),
  'X-RateLimit-Remaining': integer('Requests left in that window'),
  'X-RateLimit-Reset': integer('Unix time (seconds) at which that window starts again'),
};

const ETAG = {
  ETag: {
    description: 'Weak validator of the body: send it back in If-None-Match to get 304 Not Modified',
    schema: { type: 'string' },
  },
};

const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** Adds the headers a response really carries to each response of an operation, and the 429 it may get. */
export function rateLimitDocumentation(
  operation: Operation,
  options: {
    rateLimited: boolean;
    etag: boolean;
    extra: Record<string, Record<string, unknown>>;
    challenge?: string;
  },
): void {
  const responses = (operation.responses ??= {});
  // Any route answers 401 to a wrong key (services/http/auth.ts), with the service's challenge.
  if (options.challenge && !responses['401']) {
    responses['401'] = {
      description: 'Missing, unknown or revoked API key',
      headers: {
        'WWW-Authenticate': {
          description: `The challenge: ${options.challenge}`,
          schema: { type: 'string' },
        },
      },
      content: ERROR_CONTENT,
    };
  }
  if (options.rateLimited && !responses['429']) {
    responses['429'] = {
      description: 'Rate limit exceeded: wait Retry-After seconds',
      headers: { 'Retry-After': integer('Seconds until a request may succeed') },
      content: ERROR_CONTENT,
    };
  }
  if (options.etag && responses['200']) {
    responses['304'] ??= { description: 'Not Modified: the ETag sent in If-None-Match is still current' };
  }
  for (const [status, response] of Object.entries(responses)) {
    const headers = { ...response.headers };
    if (options.rateLimited) Object.assign(headers, RATE_LIMIT_HEADERS);
    if (options.etag && (status === '200' || status === '304')) Object.assign(headers, ETAG);
    Object.assign(headers, options.extra[status]);
    if (Object.keys(headers).length > 0) response.headers = headers;
  }
}
