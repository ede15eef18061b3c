import type { FastifyInstance } from 'fastify';
import { registerOpenApi } from '../http/openapi.js';

/** How a 401 asks for a key: there is no registered scheme for a key in a header, so the header names it. */
export const VERIFY_AUTH_CHALLENGE = 'X-API-Key realm="agora-verify"';

const OPERATIONS_ROUTES = ['/health', '/ready', '/metrics'];

/** The verification service's OpenAPI 3.1 document at /openapi.json, browsable at /docs. */
export async function registerVerifyOpenApi(app: FastifyInstance): Promise<void> {
  await registerOpenApi(app, {
    info: {
      title: 'Agora email verification API',
      version: '1.0.0',
      description:
        'Every call needs an `X-API-Key` with the verify scope. A bad address is a result, not an error; errors are ' +
        "`{error, message, code}`. Each address of a batch counts against the key's rate limit.",
    },
    documentPath: '/openapi.json',
    docsPath: '/docs',
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    security: [{ apiKey: [] }],
    documented: (url) => !OPERATIONS_ROUTES.includes(url) && !url.startsWith('/docs'),
    challenge: VERIFY_AUTH_CHALLENGE,
    rateLimited: true,
  });
}
