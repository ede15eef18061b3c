import { sql } from 'drizzle-orm';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { migrateDatabase } from './db/migrate.js';
import type { Logger } from './logger.js';
import { createQueues, type Queues } from './queues/producer.js';
import { connectRedis, type Redis } from './redis.js';

/** What every process of the system shares: the database, a producer Redis connection and the queues. */
export interface Runtime {
  config: Config;
  logger: Logger;
  database: Database;
  /** Fail-fast connection for commands (rate limits, caches, producers). */
  redis: Redis;
  redisUrl: string;
  queues: Queues;
  close(): Promise<void>;
}

export async function openRuntime(config: Config, logger: Logger, redisUrl: string, options: { migrate?: boolean } = {}): Promise<Runtime> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (options.migrate ?? true) await migrateDatabase(database);
    else await database.query(sql`SELECT 1`);
  } catch (err) {
    await database.close();
    throw err;
  }
  const redis = connectRedis(redisUrl, 'producer');
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const queues = createQueues(redis, config.queuePrefix);
  return {
    config,
    logger,
    database,
    redis,
    redisUrl,
    queues,
    async close() {
      await queues.close();
      redis.disconnect();
      await database.close();
    },
  };
}

export const readinessChecks = (runtime: Pick<Runtime, 'database' | 'redis'>) => ({
  postgres: () => runtime.database.query(sql`SELECT 1`),
  redis: () => runtime.redis.ping(),
});
