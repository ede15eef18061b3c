import { createAuthenticator } from '../../shared/access/authenticate.js';
import { readinessChecks } from '../../shared/runtime.js';
import { authPlugin } from '../http/auth.js';
import { healthRoutes } from '../http/health.js';
import { createHttpApp } from '../http/server.js';
import type { VerifyDeps } from './deps.js';

/** The email verification service: POST /verify and POST /bulk-verify with X-API-Key. Never listens. */
export async function buildVerifyApp(deps: VerifyDeps) {
  const app = createHttpApp(deps.config, deps.logger);
  await app.register(authPlugin, { authenticate: createAuthenticator(deps.database.db), header: 'x-api-key' });
  await app.register(healthRoutes, { checks: readinessChecks(deps) });
  return app;
}
