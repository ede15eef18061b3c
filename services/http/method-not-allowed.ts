import FindMyWay from 'find-my-way';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../shared/errors.js';

export class MethodNotAllowedError extends AppError {
  constructor(method: string, path: string, allowed: string[]) {
    super(405, `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, {
      Allow: allowed.join(', '),
    });
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * 405 Method Not Allowed with an Allow header when the path exists under another method (RFC 9110 §15.5.6), where
 * Fastify would answer 404. Fastify's router cannot be asked "which methods match this path", so a second router
 * learns every route's method and URL (same options as services/http/server.ts) and is only consulted for requests
 * that matched nothing, or an OPTIONS request that only CORS preflight's `*` matched and that CORS does not answer
 * (`corsAnswers`). Match-everything routes are left out of the Allow list: they would allow everything.
 */
export function methodNotAllowed(
  app: FastifyInstance,
  corsAnswers: (request: FastifyRequest) => boolean = () => false,
): void {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1100 });
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url === '/*') return;
    for (const method of ([] as string[]).concat(route.method)) {
      if (!(METHODS as readonly string[]).includes(method)) continue;
      try {
        router.on(method as FindMyWay.HTTPMethod, route.url, () => {});
      } catch {
        // Already known (the same route in another encapsulation context): nothing to add.
      }
    }
  });

  app.addHook('onRequest', async (request) => {
    // Every OPTIONS request matches CORS's match-everything route, whose handler answers 404 for what is not a
    // preflight it serves: such a request is a wrong method on its path like any other (405 on a known path).
    const unservedOptions =
      request.method === 'OPTIONS' && request.routeOptions.url === '*' && !corsAnswers(request);
    if (!request.is404 && !unservedOptions) return;
    const path = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((method) => {
      try {
        return router.find(method, path) !== null;
      } catch {
        return false; // a path the router cannot parse exists under no method
      }
    });
    if (allowed.length > 0) throw new MethodNotAllowedError(request.method, path, allowed);
  });
}
