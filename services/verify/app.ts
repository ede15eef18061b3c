import { securityHeadersPlugin } from '../http/security-headers.js';
import { createAuthenticator } from '../../shared/access/authenticate.js';
import { readinessChecks } from '../../shared/runtime.js';
import { authPlugin } from '../http/auth.js';
import { healthRoutes, serviceReadiness } from '../http/health.js';
import { registerHome } from '../http/home.js';
import { conveniencesPlugin, httpConveniences } from '../http/conveniences.js';
import { metricsPlugin } from '../http/metrics.js';
import { rateLimitPlugin } from '../http/rate-limit.js';
import { createHttpApp } from '../http/server.js';
import type { VerifyDeps } from './deps.js';
import { registerVerifyOpenApi, VERIFY_AUTH_CHALLENGE } from './openapi.js';
import { listRoutes } from './lists/routes.js';
import { verifyRoutes } from './routes.js';
import { selfCheckRoutes } from './self-check.js';

/** The email verification service: POST /verify and POST /bulk-verify with X-API-Key. Never listens. */
export async function buildVerifyApp(deps: VerifyDeps) {
  const app = createHttpApp(deps.config, deps.logger);
  // Every call needs a key, so no CORS: browsers must not hold verification keys.
  await app.register(conveniencesPlugin, {
    ...httpConveniences(deps.config),
    challenge: VERIFY_AUTH_CHALLENGE,
    corsOrigins: [],
  });
  await app.register(metricsPlugin, {
    service: 'verify',
    queues: deps.queues,
    token: deps.config.metricsToken,
    production: deps.config.env === 'production',
  });
  // The same security headers as the Q&A service (it serves JSON only, so no CSP is needed either).
  await app.register(securityHeadersPlugin);
  await app.register(authPlugin, {
    authenticate: createAuthenticator(deps.database.db),
    header: 'x-api-key',
  });
  // Per-key budgets; routes with config.rateLimitCost count each address of a batch.
  await app.register(rateLimitPlugin, { redis: deps.redis, config: deps.config, service: 'verify' });
  await app.register(healthRoutes, serviceReadiness('verify', readinessChecks(deps)));
  registerHome(app, {
    service: 'Agora verification',
    description:
      'Checks whether email addresses are deliverable: POST /verify, POST /bulk-verify, with X-API-Key.',
    links: { docs: '/docs', openapi: '/openapi.json' },
  });
  await registerVerifyOpenApi(app);
  await app.register(verifyRoutes, { deps });
  await app.register(selfCheckRoutes, { deps });
  await app.register(listRoutes, { deps });
  return app;
}
