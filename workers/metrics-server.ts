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
 * for a liveness probe. Port 0 in WORKER_METRICS_PORT turns it off (startWorkerMetrics, below).
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

/** How many ports after WORKER_METRICS_PORT a worker process tries when the ones before are taken. */
export const WORKER_METRICS_PORT_SPAN = 32;

const isAddressInUse = (err: unknown) => (err as NodeJS.ErrnoException).code === 'EADDRINUSE';

/**
 * The listener of a workers-role process: WORKER_METRICS_PORT (0 = off), or the next free port after it when
 * another process of this host has it (several worker processes on one host need no hand-set ports; each logs
 * the port it got, and a scraper finds them in that range). With every port of the range taken, or any other
 * failure, the error is logged and the worker runs on without metrics: metrics are worth less than the jobs.
 */
export async function startWorkerMetrics(
  config: { host: string; workerMetricsPort: number },
  logger: Logger,
  queues: Pick<Queues, 'queue'>,
  served: readonly QueueName[],
): Promise<MetricsServer | undefined> {
  const first = config.workerMetricsPort;
  if (first === 0) return undefined;
  const last = Math.min(65535, first + WORKER_METRICS_PORT_SPAN - 1);
  for (let port = first; port <= last; port++) {
    try {
      return await startMetricsServer({ host: config.host, port, logger, queues, served });
    } catch (err) {
      if (isAddressInUse(err) && port < last) continue;
      logger.error(
        { err, ports: `${first}-${port}` },
        'worker metrics listener not started; /metrics is off here',
      );
      return undefined;
    }
  }
  return undefined;
}
