import formbody from '@fastify/formbody';
import { securityHeadersPlugin } from '../http/security-headers.js';
import { createAuthenticator } from '../../shared/access/authenticate.js';
import { readinessChecks } from '../../shared/runtime.js';
import { searchIndexMethod } from '../../shared/db/search-index.js';
import { KEY_GROUPS, keyGroup } from '../../shared/keyspace.js';
import { authPlugin } from '../http/auth.js';
import { healthRoutes, serviceReadiness } from '../http/health.js';
import { registerHome } from '../http/home.js';
import { conveniencesPlugin, httpConveniences } from '../http/conveniences.js';
import { metricsPlugin } from '../http/metrics.js';
import { adminPlugin } from '../admin/plugin.js';
import { rateLimitPlugin } from '../http/rate-limit.js';
import { readCachePlugin } from '../http/read-cache.js';
import { readReplicaPlugin, replicaReadiness } from '../http/read-replicas.js';
import { createHttpApp } from '../http/server.js';
import type { QaDeps } from './deps.js';
import { QA_AUTH_CHALLENGE, registerOpenApi } from './openapi.js';
import { categoriesRoutes } from './routes/categories.js';
import { etagPlugin } from '../http/etag.js';
import { questionsRoutes } from './routes/questions.js';
import { searchRoutes } from './routes/search.js';
import { tagsRoutes } from './routes/tags.js';
import { usersRoutes } from './routes/users.js';
import { aiRoutes } from './internal/ai.js';
import { pollVoteRoute } from './internal/polls.js';
import { newsletterRoutes } from './internal/newsletter.js';
import { pollsRoutes } from './routes/polls.js';
import { writeRoutes } from './routes/writes/index.js';
import { answersRoutes } from './routes/answers.js';
import { commentsRoutes } from './routes/comments.js';
import { infoRoutes } from './routes/info.js';
import { userActivityRoutes } from './routes/user-activity.js';
import { badgeRoutes } from './routes/badges.js';
import { changesRoutes } from './routes/changes.js';
import { webhooksRoutes } from './routes/webhooks.js';
import { relatedRoutes } from './routes/related.js';

/** The Q&A service: public reads, writes with keys, internal endpoints. Builds the app; never listens. */
export async function buildQaApp(deps: QaDeps) {
  const app = createHttpApp(deps.config, deps.logger);
  await app.register(conveniencesPlugin, {
    ...httpConveniences(deps.config),
    challenge: QA_AUTH_CHALLENGE,
    corsPaths: (path) => path.startsWith('/api/'),
  });
  await app.register(metricsPlugin, {
    service: 'qa',
    queues: deps.queues,
    token: deps.config.metricsToken,
    production: deps.config.env === 'production',
  });
  await app.register(securityHeadersPlugin);
  // The internal *.php endpoints are posted by forms as well as JSON.
  await app.register(formbody);
  await app.register(authPlugin, { authenticate: createAuthenticator(deps.database.db), header: 'bearer' });
  // Before every route (internal *.php and 404s included); /health, /ready and /metrics are exempt.
  await app.register(rateLimitPlugin, { redis: deps.redis, config: deps.config, service: 'qa' });
  // After auth and rate limits: a cached answer is still authenticated and counted. Routes opt in with
  // `config: { readCache: true }`; every write empties it (docs/qa-api.md, "Caching: responses").
  await app.register(readCachePlugin, {
    database: deps.database,
    ttlMs: deps.config.qa.readCacheTtlMs,
    maxBytes: deps.config.qa.readCacheMaxMb * 2 ** 20,
    // An answer read from a replica may predate a write whose notification already emptied the cache: it is kept
    // no longer than a replica in use may lag.
    replicaEntryTtlMs: deps.replicas ? deps.config.databaseReplicaMaxLagMs : undefined,
  });
  // Opted-in GET routes read from a replica unless the caller wrote recently (docs/operations.md, "Read replicas").
  await app.register(readReplicaPlugin, {
    replicas: deps.replicas,
    redis: deps.redis,
    prefix: keyGroup(deps.config, KEY_GROUPS.recentWriters),
  });
  const readiness = serviceReadiness('qa', readinessChecks(deps));
  await app.register(healthRoutes, {
    ...readiness,
    optional: { ...readiness.optional, ...replicaReadiness(deps.replicas) },
    // Which full-text index path search runs on (issue 22 item 4), as the database has it.
    report: { search_index: () => searchIndexMethod(deps.database) },
  });
  await registerOpenApi(app);
  registerHome(app, {
    service: 'Agora Q&A',
    description:
      'A community question-and-answer API: public reads, writes with API keys, internal endpoints.',
    links: { docs: '/api/docs', openapi: '/api/openapi.json', questions: '/api/questions', admin: '/admin' },
  });

  await app.register(
    async (api) => {
      // Weak ETags and 304s for every 200 GET under /api (hooks apply to the routes registered after them).
      await api.register(etagPlugin);
      await api.register(categoriesRoutes, { deps });
      await api.register(questionsRoutes, { deps });
      await api.register(usersRoutes, { deps });
      await api.register(tagsRoutes, { deps });
      await api.register(searchRoutes, { deps });
      await api.register(answersRoutes, { deps });
      await api.register(commentsRoutes, { deps });
      await api.register(userActivityRoutes, { deps });
      await api.register(badgeRoutes, { deps });
      await api.register(infoRoutes, { deps });
      await api.register(pollVoteRoute, { deps });
      await api.register(newsletterRoutes, { deps });
      await api.register(aiRoutes, { deps });
      await api.register(pollsRoutes, { deps });
      await api.register(writeRoutes, { deps });
      await api.register(changesRoutes, { deps });
      await api.register(webhooksRoutes, { deps });
      await api.register(relatedRoutes, { deps });
    },
    { prefix: '/api' },
  );
  await app.register(adminPlugin, { deps });
  return app;
}
