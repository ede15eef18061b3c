import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../shared/config.js';
import { clientNetwork } from '../../shared/net/client-network.js';
import { SESSION_COOKIE } from '../admin/session.js';
import { rateLimitRejections } from '../../shared/metrics.js';
import { RateLimitedError } from '../../shared/errors.js';
import {
  createPlanLimiter,
  rateLimitKeyPrefix,
  type Budget,
  type Decision,
  type WindowDurations,
} from '../../shared/ratelimit/limiter.js';
import { duplicateConnection, type RedisClient } from '../../shared/redis.js';
import { errorBody } from './errors.js';
import { DOCUMENTATION_ROUTES } from './openapi.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What a request of this route costs, when that is known only later than onRequest (default: 1 point, counted
     * before anything else runs):
     * - a function: the points, computed in preHandler once the body is parsed and validated (a batch counts each
     *   of its entries);
     * - 'handler': known only to the handler (a streamed upload, whose cost is known once it is read), which counts
     *   it and sets request.rateLimit and the headers.
     * Either way, a request that reaches onSend uncounted (an error first) is counted 1 point there, as for any route.
     * - 'free': never counted and sent without headers, as the probes are (a list's reads and its cancel: the
     *   budget paid for the list's addresses, and a key that spent it must still follow, download and cancel).
     */
    rateLimitCost?: ((request: FastifyRequest) => number) | 'handler' | 'free';
  }
  interface FastifyRequest {
    /** The rate-limit decision of this request, once counted. */
    rateLimit: Decision | null;
  }
}

export interface RateLimitPluginOptions {
  redis: RedisClient;
  config: Pick<Config, 'rateLimits' | 'queuePrefix' | 'redisClusterNodes'>;
  /** Whose budgets: the Q&A service (plans from the key) or the verification service (one per-key budget). */
  service: 'qa' | 'verify';
  /** Window lengths in seconds; production uses an hour and a day. */
  windows?: WindowDurations;
  /** Route URLs never counted and sent without headers (probes). */
  exempt?: string[];
  redisTimeoutMs?: number;
  /** How long app.ready() waits for the Redis connection before starting on the memory store. */
  redisReadyTimeoutMs?: number;
}

export const DEFAULT_EXEMPT = ['/health', '/ready', '/metrics'];
// One load of a docs page is a dozen requests.
const EXEMPT_PREFIXES = DOCUMENTATION_ROUTES;
// A CORS preflight is the browser's question, not the caller's request. Only one that @fastify/cors answered
// (it marks the request) is free: any other OPTIONS request also lands on its match-everything route, and is a
// 404, a 405 or a 401 for a bad key like the same request under another method.
const isCorsPreflight = (request: FastifyRequest) =>
  (request as { corsPreflightEnabled?: boolean }).corsPreflightEnabled === true;
// A signed-in operator's panel traffic is not counted (the queue board polls every few seconds), but whether a
// session cookie is real is known only once the panel has checked it: a panel request that carries one is counted
// in onSend unless it turned out to be a session. Anonymous /admin requests (the login form, guesses at URLs)
// spend the anonymous budget up front like any other request, and so does every sign-in attempt.
const OPERATOR_PREFIX = '/admin';
const LOGIN_ROUTE = '/admin/login';
const SESSION_COOKIE_PRESENT = new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=`);
const STORE_WARNING_INTERVAL_MS = 30_000;

type Plan = 'anonymous' | 'authenticated' | 'premium' | 'verify';

function plansOf(
  service: RateLimitPluginOptions['service'],
  limits: Config['rateLimits'],
): Partial<Record<Plan, Budget>> {
  return service === 'qa'
    ? { anonymous: limits.anonymous, authenticated: limits.authenticated, premium: limits.premium }
    : { anonymous: limits.anonymous, verify: limits.verify };
}

function redisReady(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
  });
}

export function rateLimitHeaders(decision: Decision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.reset),
  };
}

/**
 * Counts every request against hourly and daily budgets in Redis: anonymous callers by client IP
 * (request.ip, which honours X-Forwarded-For only as TRUST_PROXY allows), callers with a key by key and plan.
 * Register it right after the auth plugin so request.principal is known. Every counted response carries
 * X-RateLimit-Limit/Remaining/Reset; a refused one is a 429 with Retry-After.
 *
 * Three moments: onRequest counts 1 point for ordinary routes; a route with a `config.rateLimitCost` function is
 * counted in preHandler, once its body is parsed (a cost of 'handler': by its handler); onSend counts 1 point for
 * any response that got here uncounted (a rejected key, an invalid body), so no request escapes the budget or goes
 * without headers.
 */
export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async (app: FastifyInstance, options) => {
    app.decorateRequest('rateLimit', null);
    const { config } = options;
    if (!config.rateLimits.enabled) return;

    const exempt = new Set(options.exempt ?? DEFAULT_EXEMPT);
    let lastWarning = 0;
    // Its own connection with auto-pipelining: the hourly and daily windows of one request (and those of all
    // requests in the same tick) leave in one write instead of one round trip each.
    const redis = duplicateConnection(options.redis, { enableAutoPipelining: true });
    redis.on('error', () => {}); // reported through onStoreError when a count fails
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    const limiter = createPlanLimiter<Plan>({
      redis,
      keyPrefix: rateLimitKeyPrefix(config, options.service),
      plans: plansOf(options.service, config.rateLimits) as Record<Plan, Budget>,
      windows: options.windows,
      redisTimeoutMs: options.redisTimeoutMs,
      onStoreError: (err) => {
        if (Date.now() - lastWarning < STORE_WARNING_INTERVAL_MS) return;
        lastWarning = Date.now();
        app.log.warn({ err: err.message }, 'rate limits: Redis unavailable, counting in process memory');
      },
    });

    const identify = (request: FastifyRequest): [Plan, string] => {
      const principal = request.principal;
      // By client network, not exact address: an IPv6 client owns a whole prefix (RATE_LIMIT_IPV6_PREFIX).
      if (!principal) return ['anonymous', `ip:${clientNetwork(request.ip, config.rateLimits.ipv6Prefix)}`];
      return [options.service === 'verify' ? 'verify' : principal.plan, `key:${principal.keyId}`];
    };

    const count = async (request: FastifyRequest, reply: FastifyReply, points: number): Promise<Decision> => {
      const [plan, key] = identify(request);
      const decision = await limiter.consume(plan, key, points);
      request.rateLimit = decision;
      if (!decision.allowed)
        rateLimitRejections.inc({ service: options.service, plan, window: decision.window });
      reply.headers(rateLimitHeaders(decision));
      return decision;
    };

    const refuse = (decision: Decision): RateLimitedError =>
      new RateLimitedError(decision.retryAfter ?? 1, rateLimitHeaders(decision));

    const isExempt = (request: FastifyRequest) => {
      const url = request.routeOptions.url;
      return (
        url !== undefined &&
        (request.routeOptions.config?.rateLimitCost === 'free' ||
          isCorsPreflight(request) ||
          exempt.has(url) ||
          EXEMPT_PREFIXES.some((p) => url === p || url.startsWith(`${p}/`)))
      );
    };
    const awaitsSession = (request: FastifyRequest) => {
      const url = request.routeOptions.url ?? request.url;
      const operatorRoute = url === OPERATOR_PREFIX || url.startsWith(`${OPERATOR_PREFIX}/`);
      return (
        operatorRoute && url !== LOGIN_ROUTE && SESSION_COOKIE_PRESENT.test(request.headers.cookie ?? '')
      );
    };
    const costOf = (request: FastifyRequest) => request.routeOptions.config?.rateLimitCost;

    // A process that has just started must not count in memory merely because its connection is still being
    // made: readiness waits (boundedly) for Redis; if it does not come, the app starts on the memory store.
    app.addHook('onReady', async () => {
      await redisReady(redis, options.redisReadyTimeoutMs ?? 3000);
    });

    app.addHook('onRequest', async (request, reply) => {
      if (isExempt(request) || costOf(request) !== undefined || awaitsSession(request)) return;
      const decision = await count(request, reply, 1);
      if (!decision.allowed) throw refuse(decision);
    });

    app.addHook('preHandler', async (request, reply) => {
      const cost = costOf(request);
      if (typeof cost !== 'function' || request.rateLimit) return;
      const points = Math.max(1, Math.floor(cost(request)));
      const decision = await count(request, reply, Number.isFinite(points) ? points : 1);
      if (!decision.allowed) throw refuse(decision);
    });

    app.addHook('onSend', async (request, reply, payload) => {
      if (request.rateLimit || isExempt(request)) return payload;
      // The service could not answer (PostgreSQL or Redis away: a key cannot even be read): not the caller's
      // doing, so it costs nothing, and its 503 with Retry-After is never turned into an hour-long 429.
      if (reply.statusCode >= 500) return payload;
      // Set by the admin panel once a session cookie checked out (services/admin/plugin.ts).
      if (request.adminSession) return payload;
      const decision = await count(request, reply, 1);
      if (decision.allowed) return payload;
      // The response was already decided (e.g. a 401 for a bad key); an exhausted budget outranks it.
      const error = refuse(decision);
      reply.code(429).headers(error.headers).type('application/json; charset=utf-8');
      return JSON.stringify(errorBody(429, error.message));
    });
  },
  { name: 'agora-rate-limit', dependencies: ['agora-auth'] },
);
