import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

export type { Redis, Cluster };

/** A connection to the deployment's Redis: one server, or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;

/** Where the deployment's Redis is: `clusterNodes` (host:port, any few nodes) when it is a Cluster. */
export interface RedisTarget {
  url: string;
  clusterNodes?: readonly string[];
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/**
 * Producers (API processes) fail fast when Redis is away so a request errors instead of hanging;
 * workers wait for Redis forever, as BullMQ requires of blocking connections.
 */
export function connectRedis(url: string, role: 'producer' | 'worker', extra?: RedisOptions): Redis;
export function connectRedis(
  target: RedisTarget,
  role: 'producer' | 'worker',
  extra?: RedisOptions,
): RedisClient;
export function connectRedis(
  target: string | RedisTarget,
  role: 'producer' | 'worker',
  extra: RedisOptions = {},
): RedisClient {
  const { url, clusterNodes = [] } = typeof target === 'string' ? { url: target } : target;
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5000, commandTimeout: 5000 };
  if (clusterNodes.length > 0) return connectCluster(clusterNodes, { ...options, ...extra });
  return new Redis(url, {
    lazyConnect: false,
    retryStrategy: (n) => Math.min(n * 200, 2000),
    ...options,
    ...extra,
  });
}

/**
 * A cluster-aware client: it learns the slot map from any node it is given, follows MOVED/ASK redirections and
 * refreshes the map when a node fails or slots move. Offline queueing is a client-wide option on a Cluster; the
 * rest of `options` applies to each node's connection.
 */
function connectCluster(nodes: readonly string[], options: RedisOptions): Cluster {
  const { enableOfflineQueue, lazyConnect, retryStrategy: _perNode, ...redisOptions } = options;
  const clusterOptions: ClusterOptions = {
    lazyConnect: lazyConnect ?? false,
    enableOfflineQueue: enableOfflineQueue ?? true,
    clusterRetryStrategy: (n) => Math.min(n * 200, 2000),
    // While a failed master's slots are being taken over (or it restarts) a command is retried, not failed.
    retryDelayOnClusterDown: 200,
    retryDelayOnFailover: 200,
    // The slot map is read from the nodes at connect time and after every redirection; ioredis's 1 s default
    // gives up on a busy node and, at start-up, leaves the client without a slot map.
    slotsRefreshTimeout: 5000,
    // No CLUSTER INFO check before 'ready': while a master is down the cluster reports cluster_state:fail, and a
    // connect() whose check finds it reconnects in the background but never settles its own promise. BullMQ awaits
    // that promise when it re-opens a worker's blocking connection (after its watchdog or a failed command), so
    // the worker would never fetch a job again. Without the check the client is ready once it has the slot map,
    // and a command that meets CLUSTERDOWN is retried (retryDelayOnClusterDown) like any other.
    enableReadyCheck: false,
    redisOptions,
  };
  return new Cluster(
    nodes.map((node) => {
      const at = node.lastIndexOf(':');
      return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
    }),
    clusterOptions,
  );
}

/**
 * A second connection like `client`, with `options` for its node connections: a blocking reader or a subscriber
 * holds its connection, so it needs its own. `Cluster.duplicate` takes other arguments than `Redis.duplicate`.
 */
export function duplicateConnection(
  client: RedisClient,
  options: RedisOptions & ClusterOptions = {},
): RedisClient {
  const copy = duplicateOf(client, options);
  // A lost connection is reported by the commands that fail on it (and retried by ioredis); without a listener,
  // ioredis also prints every failed reconnection as an unstructured "Unhandled error event" line.
  copy.on('error', () => {});
  return copy;
}

function duplicateOf(client: RedisClient, options: RedisOptions & ClusterOptions): RedisClient {
  if (!(client instanceof Cluster)) return client.duplicate(options);
  const { enableOfflineQueue, enableAutoPipelining, ...redisOptions } = options;
  return client.duplicate([], {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    redisOptions: { ...client.options.redisOptions, ...redisOptions },
  });
}

/**
 * Whether a Redis at `url` answers PING within about a second. Something that accepts connections and never answers
 * (a stopped redis-server, another service on the port) is no answer: connectTimeout ends at the TCP connection, so
 * the ready check (INFO) is skipped and PING has its own commandTimeout, else the probe would wait for ever.
 */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    enableReadyCheck: false,
    commandTimeout: 1000,
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
  if (await redisAnswers(DEFAULT_URL)) return { url: DEFAULT_URL };
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
    if (await redisAnswers(DEFAULT_URL)) return { url: DEFAULT_URL, child };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new Error(`redis-server did not start. ${REDIS_MISSING_HELP}`);
}
