import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import { buildQaApp } from '../services/qa/app.js';
import { buildVerifyApp } from '../services/verify/app.js';
import { createLogger, redactUrl } from '../shared/logger.js';
import { developmentSecretWarnings } from '../shared/production-guards.js';
import { startWorkerMetrics } from '../workers/metrics-server.js';
import { startWorkerPool, type WorkerPool } from '../workers/pool.js';
import { loadDemoDataIfEmpty } from '../shared/demo/first-start.js';
import type { Config } from '../shared/config.js';
import { bootRuntime, configOrExit } from './process.js';

/** The addresses a newcomer looks for once a role is up, printed with the 'ready' line. */
function whereThingsAre(config: Config, role: string): Record<string, string> {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const qa = `http://${host}:${config.qaPort}`;
  const verify = `http://${host}:${config.verifyPort}`;
  const where: Record<string, string> = {};
  if (role === 'all' || role === 'qa') {
    where.api = `${qa}/api/questions`;
    where.docs = `${qa}/api/docs`;
    where.admin = config.adminToken ? `${qa}/admin` : 'off (set ADMIN_TOKEN)';
  }
  if (role === 'all' || role === 'verify') where.verification = `${verify}/verify`;
  return where;
}

/**
 * The start-up of every role, shared by the entry points (bin/start.ts, bin/workers.ts). `--role all` (the
 * default, `npm start`) runs both services and every worker in one process, the local default;
 * `--role qa|verify|workers` runs one role alone for scaled deployments.
 */
export async function startRoles(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { role: { type: 'string', default: 'all' }, queues: { type: 'string' } },
    strict: true,
  });
  const role = values.role!;
  if (!['all', 'qa', 'verify', 'workers'].includes(role))
    throw new Error(`--role must be all, qa, verify or workers`);
  const config = configOrExit();
  const logger = createLogger(config.logLevel, `agora-${role}`);

  // What has started so far, stopped in this order: intake first (servers, then workers drain their running jobs),
  // then Redis and PostgreSQL. The stop signals are ours from here on, not only once 'ready' is logged: a Ctrl-C
  // during start-up (migrations, the first start's demo import, a listen) lets the step under way finish, then stops
  // what has started as gracefully as later, instead of the signal killing the process with the embedded database
  // open and a private redis-server left running.
  const servers: { close(): Promise<void> }[] = [];
  let pool: WorkerPool | undefined;
  const booted: Partial<Awaited<ReturnType<typeof bootRuntime>>> = {};
  let stopSignal: NodeJS.Signals | undefined;
  let ready = false;
  const grace = closeWithGrace(
    { delay: config.shutdownTimeoutMs + 2000, skip: [...STOP_SIGNALS] },
    async ({ signal, err }) => {
      if (err) logger.error({ err }, 'shutting down after an error');
      else logger.info({ signal: signal ?? stopSignal }, 'shutting down');
      await Promise.all(servers.map((s) => s.close()));
      await pool?.close(config.shutdownTimeoutMs);
      await booted.runtime?.close();
      booted.redis?.child?.kill('SIGTERM');
      logger.info('stopped');
    },
  );
  // SIGINT and SIGTERM are ours rather than close-with-grace's, which exits at once on a second signal. Ctrl-C on
  // `npm start` sends SIGINT to npm and to this process together, and npm forwards its own copy here: that copy
  // arrived as a "second SIGINT" and, about one time in five, cut the graceful shutdown short (exit 1, jobs not
  // drained, the embedded database not closed). A second signal within SECOND_SIGNAL_WINDOW_MS is taken for that
  // copy; a later one (the user insisting) still exits at once.
  let firstSignalAt: number | undefined;
  const onStopSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      stopSignal = signal;
      if (ready) void grace.close();
      else logger.info({ signal }, 'stopping once the start-up step under way is done');
    } else if (Date.now() - firstSignalAt >= SECOND_SIGNAL_WINDOW_MS) {
      logger.error({ signal }, `second ${signal}, exiting`);
      process.exit(1);
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onStopSignal);
  // Between start-up steps: a stop asked for meanwhile is carried out now (grace.close() ends the process).
  const stopIfAsked = async () => {
    if (stopSignal) await grace.close();
  };

  Object.assign(
    booted,
    await bootRuntime(config, logger, {
      migrate: true,
      startRedis: true,
      service: true,
      // Only the Q&A service sends reads to replicas; other roles would only run their health checks.
      readReplicas: role === 'all' || role === 'qa',
    }),
  );
  const { runtime, redis } = booted as Required<typeof booted>;
  const redisWhere =
    config.redisClusterNodes.length > 0
      ? { redisCluster: config.redisClusterNodes }
      : { redis: redactUrl(redis.url) };
  logger.info({ database: runtime.database.kind, ...redisWhere }, 'runtime ready');
  await stopIfAsked();
  if (role === 'all' || role === 'qa') await loadDemoDataIfEmpty(config, runtime.database, logger);
  for (const warning of developmentSecretWarnings(config)) logger.warn(warning);

  if (role === 'all' || role === 'qa') {
    await stopIfAsked();
    const app = await buildQaApp(runtime);
    servers.push(app);
    await app.listen({ host: config.host, port: config.qaPort });
  }
  if (role === 'all' || role === 'verify') {
    await stopIfAsked();
    const app = await buildVerifyApp(runtime);
    servers.push(app);
    await app.listen({ host: config.host, port: config.verifyPort });
  }
  if (role === 'all' || role === 'workers') {
    await stopIfAsked();
    const requested =
      values.queues
        ?.split(',')
        .map((q) => q.trim())
        .filter(Boolean) ?? config.workerQueues;
    pool = await startWorkerPool(runtime, requested);
    // Alone, a worker process has no HTTP app to serve /metrics from; with the services, theirs shows it all.
    const metrics =
      role === 'workers' ? await startWorkerMetrics(config, logger, runtime.queues, pool.queues) : undefined;
    if (metrics) servers.push(metrics);
  }

  await stopIfAsked();
  ready = true;
  logger.info(whereThingsAre(config, role), 'ready');
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const SECOND_SIGNAL_WINDOW_MS = 1000;
