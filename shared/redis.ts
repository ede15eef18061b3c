import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

export type { Redis };

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/**
 * Producers (API processes) fail fast when Redis is away so a request errors instead of hanging;
 * workers wait for Redis forever, as BullMQ requires of blocking connections.
 */
export function connectRedis(url: string, role: 'producer' | 'worker', extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5000, commandTimeout: 5000 };
  return new Redis(url, {
    lazyConnect: false,
    retryStrategy: (n) => Math.min(n * 200, 2000),
    ...options,
    ...extra,
  });
}

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export const REDIS_MISSING_HELP =
  'Agora needs Redis (queues, rate limits, caches) and none answers at 127.0.0.1:6379. Either point REDIS_URL at a ' +
  'running Redis ≥ 6.2 (for example REDIS_URL=redis://redis.internal:6379), or install Redis so that `redis-server` ' +
  'is on the PATH (Debian/Ubuntu: `apt-get install redis-server`; macOS: `brew install redis`) and run `npm start` ' +
  'again: with no REDIS_URL it starts a private redis-server itself, keeping its data in DATA_DIR/redis.';

export interface EnsuredRedis {
  url: string;
  /** The private redis-server this process started, if it had to. */
  child?: ChildProcess;
}

/**
 * The embedded default: with no REDIS_URL use 127.0.0.1:6379, and if nothing answers there start a private
 * redis-server (append-only, so accepted jobs survive a restart) as a child process.
 */
export async function ensureRedis(
  configured: string | undefined,
  dataDir: string,
  logger: Logger,
): Promise<EnsuredRedis> {
  if (configured) return { url: configured };
  if (await answers(DEFAULT_URL)) return { url: DEFAULT_URL };
  if (spawnSync('redis-server', ['--version']).error) throw new Error(REDIS_MISSING_HELP);

  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  logger.info({ dir }, 'no Redis at 127.0.0.1:6379: starting a private redis-server');
  const child = spawn(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      '6379',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await answers(DEFAULT_URL)) return { url: DEFAULT_URL, child };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new Error(`redis-server did not start. ${REDIS_MISSING_HELP}`);
}
