import { createAuthenticator } from '../../shared/access/authenticate.js';
import { readinessChecks } from '../../shared/runtime.js';
import { authPlugin } from '../http/auth.js';
import { healthRoutes } from '../http/health.js';
import { metricsPlugin } from '../http/metrics.js';
import { rateLimitPlugin } from '../http/rate-limit.js';
import { createHttpApp } from '../http/server.js';
import type { VerifyDeps } from './deps.js';
import { listRoutes } from './lists/routes.js';
import { verifyRoutes } from './routes.js';
import { selfCheckRoutes } from './self-check.js';

/** The email verification service: POST /verify and POST /bulk-verify with X-API-Key. Never listens. */
export async function buildVerifyApp(deps: VerifyDeps) {
  const app = createHttpApp(deps.config, deps.logger);
  await app.register(metricsPlugin, { service: 'verify', queues: deps.queues });
  await app.register(authPlugin, { authenticate: createAuthenticator(deps.database.db), header: 'x-api-key' });
  // Per-key budgets; routes with config.rateLimitCost count each address of a batch.
  await app.register(rateLimitPlugin, { redis: deps.redis, config: deps.config, service: 'verify' });
  await app.register(healthRoutes, { checks: readinessChecks(deps) });
  await app.register(verifyRoutes, { deps });
  await app.register(selfCheckRoutes, { deps });
  await app.register(listRoutes, { deps });
  return app;
}
