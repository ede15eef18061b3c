import type { Config } from './config.js';

/**
 * Where the system's Redis keys go, by group. Redis Cluster runs a Lua script, a MULTI or (through ioredis) a
 * pipeline only when all its keys hash to one slot, and a key's slot is that of its hash tag (the text between
 * the first `{` and `}`). So each group of keys used together shares one tag, and different groups get different
 * tags, so that they spread over the shards.
 *
 * On a single Redis (no REDIS_CLUSTER_NODES) every group's prefix is QUEUE_PREFIX as it is (default `{agora}`),
 * the key names operators and existing deployments know. On a Cluster a group's prefix is QUEUE_PREFIX with the
 * group's name inside its braces: `{agora}` becomes `{agora:verify}` (a prefix without braces gets them:
 * `agora` becomes `{agora:verify}` too). Two deployments with different prefixes still never share a key.
 */
export type KeyspaceConfig = Pick<Config, 'queuePrefix' | 'redisClusterNodes'>;

export const isClusterConfig = (config: KeyspaceConfig): boolean => config.redisClusterNodes.length > 0;

/** QUEUE_PREFIX without its hash-tag braces: the deployment's name inside every cluster tag. */
const deploymentName = (queuePrefix: string): string => queuePrefix.replace(/[{}]/g, '');

/** Prefix (without a trailing separator) of one group of keys that scripts and transactions use together. */
export function keyGroup(config: KeyspaceConfig, group: string): string {
  return isClusterConfig(config) ? `{${deploymentName(config.queuePrefix)}:${group}}` : config.queuePrefix;
}

/**
 * BullMQ prefix of one queue: BullMQ's scripts touch many keys of a queue at once, so on a Cluster each queue is a
 * group of its own (BullMQ's documented practice: a hash tag in the prefix), and the queues spread over shards.
 */
export const queueKeyPrefix = (config: KeyspaceConfig, queue: string): string => keyGroup(config, queue);

/**
 * The key groups, named once so that two modules sharing keys (the verify rate limiter and the lists' budget,
 * which refunds the verify limiter's counters) cannot drift apart.
 */
export const KEY_GROUPS = {
  /** The verification engine: result, DNS and catch-all caches, reply streams (host work is tagged per host). */
  verification: 'verification',
  /** Every rate limiter's counters. */
  rateLimit: 'ratelimit',
  /** Question view counters and their flush batches (one Lua script moves pending to a batch). */
  views: 'views',
  /** The tag-suggestion index's state. */
  tagIndex: 'tag-index',
  /** Admin panel: login throttle and one-time form tokens. */
  admin: 'admin',
  /** Which API keys wrote lately (read replicas' read-your-writes). */
  recentWriters: 'recent-writers',
} as const;

/**
 * A key of its own slot under a prefix: the prefix's braces dropped (the first `{…}` of a key is its hash tag) and
 * `tag` in braces. The MX host work lists use it on a Cluster: a host's three lists share a script, and the hosts
 * spread over the shards.
 */
export const ownSlot = (prefix: string, tag: string): string => `${deploymentName(prefix)}{${tag}}`;
