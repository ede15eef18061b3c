import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

/**
 * A PostgreSQL and a redis-server of a bench's own, listening on one address of a virtual network (bench/lib/netns.ts),
 * so that the machine's servers, which other people use, are never reconfigured or restarted. Both live in a
 * directory the caller removes; `stop()` is synchronous so that it can run from an exit handler too.
 */

export interface PrivateServer {
  url: string;
  stop(): void;
}

/** A port free on `host` (the address is the bench's own, so nothing else takes it before the server does). */
export async function freePortOn(host: string): Promise<number> {
  const server = createServer().listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

const asPostgres = (args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8', stdio: 'pipe' });

/**
 * initdb into `dir` with the machine's binaries (as the postgres user: PostgreSQL refuses to run as root), trust
 * authentication for the `subnet` (CIDR), listening on `host` only.
 */
export async function startPrivatePostgres(
  dir: string,
  host: string,
  subnet: string,
): Promise<PrivateServer> {
  mkdirSync(dir, { recursive: true });
  const pg = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
  chownSync(dir, Number(pg), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()));
  const data = path.join(dir, 'data');
  asPostgres(['initdb', '-D', data, '--auth=trust', '--username=postgres', '--no-sync']);
  appendFileSync(path.join(data, 'pg_hba.conf'), `host all all ${subnet} trust\n`);
  const port = await freePortOn(host);
  // Durability is not what is measured: fsync off spares the shared machine's disk.
  const options = [
    `-c listen_addresses=${host}`,
    `-p ${port}`,
    `-k ${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c max_connections=300',
  ].join(' ');
  asPostgres([
    'pg_ctl',
    '-D',
    data,
    '-l',
    path.join(dir, 'postgres.log'),
    '-w',
    '-t',
    '60',
    '-o',
    options,
    'start',
  ]);
  let stopped = false;
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        asPostgres(['pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // not running
      }
    },
  };
}

/** redis-server without persistence bound to `host`; resolves once it answers PING. */
export async function startPrivateRedis(dir: string, host: string): Promise<PrivateServer> {
  mkdirSync(dir, { recursive: true });
  const port = await freePortOn(host);
  const conf = path.join(dir, 'redis.conf');
  writeFileSync(
    conf,
    [`bind ${host}`, `port ${port}`, 'save ""', 'appendonly no', 'protected-mode no', `dir ${dir}`].join(
      '\n',
    ),
  );
  const child: ChildProcess = spawn('redis-server', [conf], { stdio: 'ignore' });
  const url = `redis://${host}:${port}`;
  for (let attempt = 0; ; attempt++) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, connectTimeout: 1000 });
    probe.on('error', () => {});
    const up = await probe.connect().then(
      () => probe.ping().then(() => true),
      () => false,
    );
    probe.disconnect();
    if (up) break;
    if (attempt > 100 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on ${url} did not start`);
    }
    await sleep(100);
  }
  return {
    url,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
