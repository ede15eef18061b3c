import { loadConfig, ConfigError, type Config } from '../shared/config.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { ensureRedis, type EnsuredRedis } from '../shared/redis.js';
import { openRuntime, type Runtime } from '../shared/runtime.js';

/** Loads the configuration or exits with every bad variable listed: the one place that turns them into a message. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** Opens the runtime for a command-line tool or a server process, starting a private Redis if it must. */
export async function bootRuntime(
  config: Config,
  logger: Logger,
  options: { migrate?: boolean; startRedis?: boolean; service?: boolean; readReplicas?: boolean } = {},
): Promise<{ runtime: Runtime; redis: EnsuredRedis }> {
  let redis: EnsuredRedis;
  try {
    // A Cluster is reached through its nodes (REDIS_CLUSTER_NODES): never a private redis-server then.
    redis =
      config.redisClusterNodes.length > 0
        ? { url: config.redisUrl ?? `redis://${config.redisClusterNodes[0]}` }
        : options.startRedis
          ? await ensureRedis(config.redisUrl, config.dataDir, logger)
          : { url: config.redisUrl ?? 'redis://127.0.0.1:6379' };
  } catch (err) {
    process.stderr.write(`\n${(err as Error).message}\n\n`);
    process.exit(3);
  }
  const runtime = await openRuntime(config, logger, redis.url, {
    migrate: options.migrate,
    service: options.service,
    readReplicas: options.readReplicas,
  });
  return { runtime, redis };
}

export const cliLogger = (config: Config): Logger =>
  createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, 'agora-cli', 'stderr');
