import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { QUEUE_NAMES } from '../../shared/queues/names.js';
import {
  httpDuration,
  httpRequests,
  queueDepthOf,
  renderMetrics,
  reportQueueDepth,
} from '../../shared/metrics.js';
import type { Queues } from '../../shared/queues/producer.js';

export interface MetricsOptions {
  /** The `service` label: qa | verify. */
  service: string;
  /** When given, `/metrics` also reports the depth of every queue (read from Redis at scrape time). */
  queues?: Pick<Queues, 'queue'>;
  /**
   * METRICS_TOKEN: when set, `/metrics` answers only `Authorization: Bearer <token>`. When unset, `/metrics` is
   * open in development and absent (404) in production, where these ports face the public.
   */
  token?: string;
  production?: boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function bearerMatches(request: FastifyRequest, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

/**
 * Counts and times every response by route pattern (`/api/questions/:id`, never the raw URL, so the series
 * count stays bounded; requests no route matched are `unmatched`) and serves `GET /metrics` in the Prometheus
 * text format, behind METRICS_TOKEN (see the options; docs/security.md "Metrics").
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app: FastifyInstance, { service, queues, token, production = false }) => {
    if (queues) reportQueueDepth(queueDepthOf(queues, QUEUE_NAMES));

    app.addHook('onResponse', async (request, reply) => {
      const labels = {
        service,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      };
      httpRequests.inc(labels);
      httpDuration.observe(labels, reply.elapsedTime / 1000);
    });

    if (!token && production) return;
    const expected = token ? digest(token) : null;
    // apiKey: false: the Bearer here is the metrics token, not an API key for the auth plugin to reject.
    app.get(
      '/metrics',
      { logLevel: 'warn', schema: { hide: true }, config: { apiKey: false } },
      async (request, reply) => {
        if (expected && !bearerMatches(request, expected)) {
          return reply.status(401).header('www-authenticate', 'Bearer realm="metrics"').send({
            error: true,
            message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
            code: 401,
          });
        }
        const { contentType, body } = await renderMetrics();
        return reply.type(contentType).send(body);
      },
    );
  },
  { name: 'agora-metrics' },
);
