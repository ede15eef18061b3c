import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { QueueName } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { queueDepthOf, renderMetrics, reportQueueDepth } from '../shared/metrics.js';
import type { Queues } from '../shared/queues/producer.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A worker process has no HTTP app, so Prometheus scrapes this tiny listener instead: `GET /metrics` (job
 * durations and failures of the queues this process serves, queue depth, process metrics) and `GET /health`
 * for a liveness probe. Port 0 in WORKER_METRICS_PORT turns it off (see bin/start.ts).
 */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  logger: Logger;
  queues?: Pick<Queues, 'queue'>;
  served?: readonly QueueName[];
}): Promise<MetricsServer> {
  if (options.queues && options.served) reportQueueDepth(queueDepthOf(options.queues, options.served));

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, 'application/json', body(405, 'Method not allowed'));
    if (path === '/health') return send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path !== '/metrics')
      return send(res, 404, 'application/json', body(404, `No route for ${req.method} ${path}`));
    renderMetrics().then(
      ({ contentType, body: text }) => send(res, 200, contentType, text),
      (err: unknown) => {
        options.logger.error({ err }, 'metrics rendering failed');
        send(res, 500, 'application/json', body(500, 'Internal server error'));
      },
    );
  });
  // A scraper that stalls must not hold a socket open for ever.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'worker metrics listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

const body = (code: number, message: string) => JSON.stringify({ error: true, message, code });

function send(res: http.ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

/**
 * The listener of a workers-role process: WORKER_METRICS_PORT, 0 = off. A port already taken (two worker
 * processes on one host with the same setting) is logged and the worker runs on without it: metrics are worth
 * less than the jobs. Give each process its own port when several share a host.
 */
export async function startWorkerMetrics(
  config: { host: string; workerMetricsPort: number },
  logger: Logger,
  queues: Pick<Queues, 'queue'>,
  served: readonly QueueName[],
): Promise<MetricsServer | undefined> {
  if (config.workerMetricsPort === 0) return undefined;
  try {
    return await startMetricsServer({
      host: config.host,
      port: config.workerMetricsPort,
      logger,
      queues,
      served,
    });
  } catch (err) {
    logger.error(
      { err, port: config.workerMetricsPort },
      'worker metrics listener not started; /metrics is off here',
    );
    return undefined;
  }
}
