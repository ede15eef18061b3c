import { sql } from 'drizzle-orm';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { migrateDatabase } from './db/migrate.js';
import { openReadReplicas, routedDatabase, type ReadReplicas } from './db/replicas/index.js';
import type { Logger } from './logger.js';
import { queueKeyPrefix } from './keyspace.js';
import { createQueues, type Queues } from './queues/producer.js';
import { connectRedis, type RedisClient } from './redis.js';

/** What every process of the system shares: the database, a producer Redis connection and the queues. */
export interface Runtime {
  config: Config;
  logger: Logger;
  database: Database;
  /**
   * The read replicas of DATABASE_READ_URLS, opened where `readReplicas` is asked for (the Q&A role), else
   * undefined: `database.db` then reads from one of them inside `onReplica` scopes (services/http/read-replicas.ts)
   * and from the primary everywhere else.
   */
  replicas: ReadReplicas | undefined;
  /** Fail-fast connection for commands (rate limits, caches, producers). */
  redis: RedisClient;
  redisUrl: string;
  queues: Queues;
  close(): Promise<void>;
}

export async function openRuntime(
  config: Config,
  logger: Logger,
  redisUrl: string,
  options: { migrate?: boolean; service?: boolean; readReplicas?: boolean } = {},
): Promise<Runtime> {
  const target = {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    embeddedRole: options.service ? ('service' as const) : ('tool' as const),
  };
  const migrate = options.migrate ?? true;
  // Migrations may rebuild indexes of large tables: on a server they run on a connection of their own, without
  // the statement timeout that protects requests. PGlite is in-process and has no such timeout.
  if (migrate && config.databaseUrl) {
    const migrator = await openDatabase({ ...target, maxConnections: 2 });
    try {
      await migrateDatabase(migrator);
    } finally {
      await migrator.close();
    }
  }
  const database = await openDatabase({
    ...target,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    idleTransactionTimeoutMs: config.databaseIdleTransactionTimeoutMs,
  });
  try {
    if (migrate && !config.databaseUrl) await migrateDatabase(database);
    else await database.query(sql`SELECT 1`);
  } catch (err) {
    await database.close();
    throw err;
  }
  let replicas: ReadReplicas | undefined;
  if (options.readReplicas && config.databaseReadUrls.length > 0) {
    try {
      replicas = await openReadReplicas({
        urls: config.databaseReadUrls,
        primary: database,
        maxLagMs: config.databaseReplicaMaxLagMs,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
        logger,
      });
    } catch (err) {
      await database.close();
      throw err;
    }
  }
  const redis = connectRedis({ url: redisUrl, clusterNodes: config.redisClusterNodes }, 'producer');
  // Once close() has begun, an error is our own disconnect: a short CLI command (`npm run admin -- keys list`) closes
  // before the connection's handshake is over, and ioredis then fails its ready check ("Stream isn't writeable") and
  // emits that as an error. It is not a connection problem, so it is not logged as one.
  let closing = false;
  redis.on('error', (err) => {
    if (!closing) logger.warn({ err: err.message }, 'redis connection error');
  });
  const queues = createQueues(redis, (queue) => queueKeyPrefix(config, queue));
  return {
    config,
    logger,
    database: replicas ? routedDatabase(database) : database,
    replicas,
    redis,
    redisUrl,
    queues,
    async close() {
      closing = true;
      await queues.close();
      redis.disconnect();
      await replicas?.close();
      await database.close();
    },
  };
}

export const readinessChecks = (runtime: Pick<Runtime, 'database' | 'redis'>) => ({
  postgres: () => runtime.database.query(sql`SELECT 1`),
  redis: () => runtime.redis.ping(),
});
