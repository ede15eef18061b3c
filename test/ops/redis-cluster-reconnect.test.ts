import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, duplicateConnection, type Cluster } from '../../shared/redis.js';
import { BLOCKING_CONNECTION } from '../../shared/verification/host-replies.js';
import { startRedisCluster, type RedisClusterFixture } from '../support/redis-cluster.js';

// BullMQ re-opens a worker's blocking connection (disconnect, then connect) when a blocking read outlives its
// watchdog or fails, and waits for that connect() before it fetches again. During a master's outage the cluster
// reports cluster_state:fail; a connect() made then must still settle once the cluster is back, or the worker
// never takes another job (the verify-hosts drainers did exactly that after a master restart).

let cluster: RedisClusterFixture;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

/** 'settled' once `promise` resolved or rejected, 'pending' if it has not after `ms`. */
const within = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => 'settled' as const,
      () => 'settled' as const,
    ),
    sleep(ms).then(() => 'pending' as const),
  ]);

describe('a Cluster connection re-opened while a master is down', () => {
  it('connects once the cluster is ok again, as the blocking connection of a worker', async () => {
    const base = connectRedis({ url: '', clusterNodes: cluster.nodes }, 'producer');
    base.on('error', () => {});
    const blocking = duplicateConnection(base, BLOCKING_CONNECTION) as Cluster;
    blocking.on('error', () => {});
    try {
      expect(await blocking.ping()).toBe('PONG');
      const [victim, witness] = cluster.ports as [number, number];
      let reopened: Promise<void> | undefined;
      await cluster.restart(victim, async () => {
        for (;;) {
          const info = (await cluster.node(witness).cluster('INFO')) as string;
          if (info.includes('cluster_state:fail')) break;
          await sleep(200);
        }
        // As BullMQ does: wait for the old connections to end, then connect.
        const ended = new Promise((resolve) => blocking.once('end', resolve));
        blocking.disconnect();
        await ended;
        reopened = blocking.connect();
      });
      // The cluster is ok on every node: the connect() must settle now. The bound only turns a connect() that
      // never settles into a failure instead of a hung test; it is not a latency requirement.
      expect(await within(reopened!, 30_000)).toBe('settled');
      expect(await blocking.ping()).toBe('PONG');
    } finally {
      blocking.disconnect();
      base.disconnect();
    }
  }, 180_000);
});
