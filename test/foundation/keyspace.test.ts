import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { KEY_GROUPS, keyGroup, ownSlot, queueKeyPrefix } from '../../shared/keyspace.js';

const single = loadConfig({ QUEUE_PREFIX: '{agora}' });
const cluster = loadConfig({ QUEUE_PREFIX: '{agora}', REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001' });

describe('Redis key names (shared/keyspace.ts)', () => {
  it('keeps QUEUE_PREFIX as it is on a single Redis', () => {
    expect(single.redisClusterNodes).toEqual([]);
    expect(queueKeyPrefix(single, 'verify')).toBe('{agora}');
    expect(keyGroup(single, KEY_GROUPS.rateLimit)).toBe('{agora}');
  });

  it('gives each queue and each key group a hash tag of its own on a Cluster', () => {
    expect(cluster.redisClusterNodes).toEqual(['10.0.0.1:7000', 'redis-b:7001']);
    expect(queueKeyPrefix(cluster, 'verify')).toBe('{agora:verify}');
    expect(queueKeyPrefix(cluster, 'verify-hosts')).toBe('{agora:verify-hosts}');
    expect(keyGroup(cluster, KEY_GROUPS.verification)).toBe('{agora:verification}');
    // A prefix without braces gets them: every key of a Cluster deployment is tagged.
    expect(keyGroup({ ...cluster, queuePrefix: 'shop' }, KEY_GROUPS.views)).toBe('{shop:views}');
  });

  it('puts a key in a slot of its own by dropping the prefix braces', () => {
    expect(ownSlot('{agora:verification}:verify:host-work:', 'mx.example.com')).toBe(
      'agora:verification:verify:host-work:{mx.example.com}',
    );
  });

  it('refuses cluster nodes without a port', () => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES/);
  });
});
