import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { QUEUE_NAMES } from '../../shared/config.js';
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
}

/**
 * Counts and times every response by route pattern (`/api/questions/:id`, never the raw URL, so the series
 * count stays bounded; requests no route matched are `unmatched`) and serves `GET /metrics` in the Prometheus
 * text format. `/metrics` is meant for the cluster network: expose only `/api` (and `/admin`) publicly.
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app: FastifyInstance, { service, queues }) => {
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

    app.get('/metrics', { logLevel: 'warn', schema: { hide: true } }, async (_request, reply) => {
      const { contentType, body } = await renderMetrics();
      return reply.type(contentType).send(body);
    });
  },
  { name: 'agora-metrics' },
);
