import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';

/**
 * A Redis Cluster of the test's own: `size` masters on loopback (no replicas), each a redis-server child with its
 * nodes.conf and append-only file in a temporary directory, so that a node can be stopped and started again with
 * its slots and its data, as a production node with AOF would be.
 */
export interface RedisClusterFixture {
  /** `host:port` of every node, for REDIS_CLUSTER_NODES. */
  nodes: string[];
  ports: number[];
  /** A client on one node (not cluster-aware): CLUSTER and DBSIZE commands. */
  node(port: number): Redis;
  /** The port of the master that owns `key`'s slot. */
  ownerOf(key: string): Promise<number>;
  /** SIGTERM one node (it writes its AOF and exits), then starts it again and waits for the cluster to be ok. */
  restart(port: number, whileDown?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

const CLUSTER_WAIT_MS = 60_000;

export async function startRedisCluster(size = 3): Promise<RedisClusterFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agora-redis-cluster-'));
  const ports: number[] = [];
  const busPorts: number[] = [];
  for (let i = 0; i < size; i++) {
    ports.push(await freePort());
    busPorts.push(await freePort());
  }
  const children = new Map<number, ChildProcess>();
  const clients = new Map<number, Redis>();

  const startNode = (k: number): ChildProcess => {
    const port = ports[k]!;
    const nodeDir = path.join(dir, String(port));
    mkdirSync(nodeDir, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(busPorts[k]),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(nodeDir, 'nodes.conf'),
        '--cluster-node-timeout',
        '5000',
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'yes',
      ],
      { stdio: 'ignore' },
    );
    children.set(port, child);
    return child;
  };

  const node = (port: number): Redis => {
    let client = clients.get(port);
    if (!client) {
      client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 200 });
      client.on('error', () => {});
      clients.set(port, client);
    }
    return client;
  };

  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + CLUSTER_WAIT_MS;
    while (Date.now() < deadline) {
      if (await check().catch(() => false)) return;
      await sleep(100);
    }
    throw new Error(`redis cluster: timed out waiting for ${what}`);
  };

  const allOk = (): Promise<void> =>
    until('cluster_state:ok on every node', async () => {
      for (const port of ports) {
        const info = (await node(port).cluster('INFO')) as string;
        if (!info.includes('cluster_state:ok')) return false;
      }
      return true;
    });

  ports.forEach((_, k) => startNode(k));
  await until('every node to answer', async () => {
    for (const port of ports) if ((await node(port).ping()) !== 'PONG') return false;
    return true;
  });
  const created = spawnSync(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ],
    { encoding: 'utf8', timeout: CLUSTER_WAIT_MS },
  );
  if (created.status !== 0)
    throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  await allOk();

  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`),
    ports,
    node,
    async ownerOf(key) {
      const slot = (await node(ports[0]!).cluster('KEYSLOT', key)) as number;
      const shards = await node(ports[0]!).cluster('SLOTS');
      const owner = shards.find(([from, to]) => slot >= from && slot <= to);
      if (!owner) throw new Error(`no owner for slot ${slot}`);
      return owner[2]![1];
    },
    async restart(port, whileDown) {
      const k = ports.indexOf(port);
      const child = children.get(port)!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await whileDown?.();
      startNode(k);
      await until(`node ${port} to answer again`, async () => (await node(port).ping()) === 'PONG');
      await allOk();
    },
    async stop() {
      for (const client of clients.values()) client.disconnect();
      await Promise.all(
        [...children.values()].map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await exited;
        }),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
