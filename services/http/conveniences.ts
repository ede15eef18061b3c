import { boundInflation } from './inflation-guard.js';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../shared/config.js';
import { AppError } from '../../shared/errors.js';
import { methodNotAllowed } from './method-not-allowed.js';

export interface ConveniencesOptions {
  /** The WWW-Authenticate challenge of a 401 (RFC 9110 §11.6.1): how this service wants its key. */
  challenge: string;
  /**
   * CORS for public reads: GET and HEAD of URLs `corsPaths` accepts, from these origins ('*': any). No cookies are
   * involved, so credentials are never allowed. Empty: no CORS headers at all.
   */
  corsOrigins: string[];
  corsPaths?: (path: string) => boolean;
  /** Shed load with 503 + Retry-After past these (0: that check is off). */
  maxEventLoopDelayMs: number;
  maxHeapUsedMb: number;
}

/** Headers a browser script may read from a cross-origin answer. */
const EXPOSED_HEADERS = [
  'ETag',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
];
const READ_METHODS = ['GET', 'HEAD'];
// Liveness and scraping must answer even when the process sheds load; /ready does not (it leaves the rotation).
const NEVER_SHED = new Set(['/health', '/metrics']);
const RETRY_AFTER_SECONDS = 10;

/** The options that come from the configuration (CORS_ORIGINS, MAX_EVENT_LOOP_DELAY_MS, MAX_HEAP_USED_MB). */
export const httpConveniences = (
  config: Pick<Config, 'corsOrigins' | 'maxEventLoopDelayMs' | 'maxHeapUsedMb'>,
) => ({
  corsOrigins: config.corsOrigins,
  maxEventLoopDelayMs: config.maxEventLoopDelayMs,
  maxHeapUsedMb: config.maxHeapUsedMb,
});

const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? '/';

/** Whether a request is a cross-origin read (or its preflight) that CORS should answer. */
function isPublicRead(request: FastifyRequest, corsPaths: (path: string) => boolean): boolean {
  const method =
    request.method === 'OPTIONS'
      ? String(request.headers['access-control-request-method'] ?? '')
      : request.method;
  return READ_METHODS.includes(method.toUpperCase()) && corsPaths(pathOf(request));
}

/**
 * What HTTP clients expect of an API beyond its routes: gzip/brotli/deflate answers (above 1 kB, when asked
 * for), CORS for public reads, 405 with Allow for a known path and a wrong method, a WWW-Authenticate challenge on
 * every 401, and load shedding (@fastify/under-pressure). Register it first: the 405 lookup learns every route
 * registered after it.
 */
export const conveniencesPlugin = fp<ConveniencesOptions>(
  async (app: FastifyInstance, options) => {
    const corsPaths = options.corsPaths ?? (() => true);
    // A preflight CORS answers: a public read's (strict preflight: Origin and Access-Control-Request-Method).
    const corsAnswers = (request: FastifyRequest) =>
      options.corsOrigins.length > 0 &&
      request.headers.origin !== undefined &&
      request.headers['access-control-request-method'] !== undefined &&
      isPublicRead(request, corsPaths);
    methodNotAllowed(app, corsAnswers);

    // Route-level onSend hooks run last, so ETags, the read cache and rate-limit headers see the plain body.
    await app.register(compress, { encodings: ['br', 'gzip', 'deflate'] });
    boundInflation(app);

    if (options.corsOrigins.length > 0) {
      const allowed = {
        origin: options.corsOrigins.includes('*') ? '*' : options.corsOrigins,
        methods: READ_METHODS,
        allowedHeaders: ['Authorization', 'If-None-Match', 'X-Request-Id'],
        exposedHeaders: EXPOSED_HEADERS,
        credentials: false,
        maxAge: 600,
      };
      await app.register(cors, {
        delegator: (request, callback) =>
          callback(null, isPublicRead(request, corsPaths) ? allowed : { origin: false }),
      });
    }

    app.addHook('onSend', async (_request, reply, payload) => {
      if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate'))
        reply.header('www-authenticate', options.challenge);
      return payload;
    });

    await app.register(underPressure, {
      maxEventLoopDelay: options.maxEventLoopDelayMs,
      maxHeapUsedBytes: options.maxHeapUsedMb * 2 ** 20,
      // Rejecting makes it an error, so the answer has the documented error body and passes every onSend hook.
      pressureHandler: async (request) => {
        if (NEVER_SHED.has(request.routeOptions.url ?? '')) return;
        throw new AppError(503, 'The service is overloaded; try again shortly', {
          'Retry-After': String(RETRY_AFTER_SECONDS),
        });
      },
    });
  },
  { name: 'agora-conveniences' },
);
