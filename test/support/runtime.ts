import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { openRuntime, type Runtime } from '../../shared/runtime.js';
import { DATABASE_PREFIX, databaseUrl, REDIS_URL, withAdmin } from './postgres.js';

export interface TestRuntime extends Runtime {
  /** The environment that reproduces this runtime in a child process (a worker, a CLI). */
  env: Record<string, string>;
  databaseName: string;
}

/**
 * A runtime on a database of its own (cloned from the migrated template) and a Redis key prefix of its own, so
 * test files run in parallel without seeing each other. `close()` drops both.
 */
export async function createTestRuntime(overrides: Record<string, string> = {}): Promise<TestRuntime> {
  const template = process.env.AGORA_TEST_TEMPLATE;
  if (!template) throw new Error('AGORA_TEST_TEMPLATE is unset: run tests through vitest (globalSetup)');
  const id = randomBytes(4).toString('hex');
  const databaseName = `${DATABASE_PREFIX}_t_${process.pid}_${id}`;
  await withAdmin((sql) => sql.unsafe(`CREATE DATABASE "${databaseName}" TEMPLATE "${template}"`));

  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl(databaseName),
    REDIS_URL,
    QUEUE_PREFIX: `{agora-test-${id}}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    NODE_ENV: 'test',
    // Many worker processes share this host in tests: no fixed metrics port.
    WORKER_METRICS_PORT: '0',
    ...overrides,
  };
  const config = loadConfig(env);
  const runtime = await openRuntime(config, createLogger(config.logLevel, 'test'), REDIS_URL, {
    migrate: false,
  });

  return {
    ...runtime,
    env,
    databaseName,
    async close() {
      await runtime.close();
      await deleteKeys(`${config.queuePrefix}*`);
      await withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`));
    },
  };
}

export async function deleteKeys(pattern: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
