import type { FastifyInstance } from 'fastify';
import { registerOpenApi as registerDocument } from '../http/openapi.js';

/** How a 401 asks for a key (RFC 6750). */
export const QA_AUTH_CHALLENGE = 'Bearer realm="agora"';

/** The OpenAPI 3.1 document is generated from the route schemas: /api/openapi.json, browsable at /api/docs. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await registerDocument(app, {
    info: {
      title: 'Agora Q&A API',
      version: '1.0.0',
      description:
        'Public reads need no key; writes need `Authorization: Bearer <API key>`. Errors are `{error, message, code}`.',
    },
    documentPath: '/api/openapi.json',
    docsPath: '/api/docs',
    operationIdPrefix: '/api',
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    documented: (url) => url.startsWith('/api/') && !url.startsWith('/api/docs'),
    challenge: QA_AUTH_CHALLENGE,
    rateLimited: true,
    // services/qa/app.ts registers the ETag plugin for everything under /api.
    etag: (path) => path.startsWith('/api/'),
    responseHeaders: {
      'POST /api/questions 201': {
        Location: { description: 'URL of the new question', schema: { type: 'string' } },
      },
    },
  });
}
