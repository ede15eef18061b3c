import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import { createAuthenticator } from '../../shared/access/authenticate.js';
import { readinessChecks } from '../../shared/runtime.js';
import { authPlugin } from '../http/auth.js';
import { healthRoutes } from '../http/health.js';
import { createHttpApp } from '../http/server.js';
import type { QaDeps } from './deps.js';
import { registerOpenApi } from './openapi.js';
import { categoriesRoutes } from './routes/categories.js';

/** The Q&A service: public reads, writes with keys, internal endpoints. Builds the app; never listens. */
export async function buildQaApp(deps: QaDeps) {
  const app = createHttpApp(deps.config, deps.logger);
  await app.register(helmet, { global: true, contentSecurityPolicy: false });
  // The internal *.php endpoints are posted by forms as well as JSON.
  await app.register(formbody);
  await app.register(authPlugin, { authenticate: createAuthenticator(deps.database.db), header: 'bearer' });
  await app.register(healthRoutes, { checks: readinessChecks(deps) });
  await registerOpenApi(app);

  await app.register(
    async (api) => {
      await api.register(categoriesRoutes, { deps });
    },
    { prefix: '/api' },
  );
  return app;
}
