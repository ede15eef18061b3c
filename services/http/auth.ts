import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Authenticator } from '../../shared/access/authenticate.js';
import { assertScope } from '../../shared/access/authenticate.js';
import type { Principal, Scope } from '../../shared/access/keys.js';
import { UnauthorizedError } from '../../shared/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route reads its own Authorization header (GET /metrics); no API key is looked for. */
    apiKey?: false;
  }
  interface FastifyRequest {
    /** The API key's owner and plan, or null for an anonymous request. */
    principal: Principal | null;
  }
}

export type KeyHeader = 'bearer' | 'x-api-key';

function readKey(request: FastifyRequest, header: KeyHeader): string | undefined {
  if (header === 'x-api-key') {
    const value = request.headers['x-api-key'];
    return typeof value === 'string' && value.length > 0 ? value.trim() : undefined;
  }
  const authorization = request.headers.authorization;
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new UnauthorizedError('Authorization header must be "Bearer <API key>"');
  return match[1];
}

/**
 * Resolves the caller on every request, before rate limiting needs the plan. A request without a key is
 * anonymous; a request with a wrong, unknown or revoked key is refused (401) even on public reads, as a
 * client sending a bad key wants to know.
 */
export const authPlugin = fp<{ authenticate: Authenticator; header: KeyHeader }>(
  async (app: FastifyInstance, { authenticate, header }) => {
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request) => {
      if (request.routeOptions.config?.apiKey === false) return;
      const key = readKey(request, header);
      request.principal = key === undefined ? null : await authenticate(key);
    });
  },
  { name: 'agora-auth' },
);

/** preHandler that demands a key with the scope: 401 without a key, 403 without the scope. */
export const requireScope = (scope: Scope) => async (request: FastifyRequest) => {
  assertScope(request.principal, scope);
};
