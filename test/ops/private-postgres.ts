import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl on its own port and data directory), so that the test
 * can stop and start it: the shared server on 5432 is never touched. PostgreSQL refuses to run as root, so
 * under root the commands run as the `postgres` user, which owns the directory.
 */
export interface PrivatePostgres {
  port: number;
  url(database?: string): string;
  /** pg_ctl stop in fast mode: open sessions are terminated, new connections refused until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const asPostgresUser = (command: string, args: string[]) =>
  process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);

export async function startPrivatePostgres(port: number): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agora-pg-'));
  const data = path.join(dir, 'data');
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const uid = Number(stdout.trim());
    chownSync(dir, uid, -1);
    chmodSync(dir, 0o700);
  }
  await asPostgresUser(`${BIN}/initdb`, [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const pgCtl = (...args: string[]) =>
    asPostgresUser(`${BIN}/pg_ctl`, ['-D', data, '-l', path.join(dir, 'log'), '-o', options, ...args]);
  const start = async () => {
    await pgCtl('-w', '-t', '60', 'start');
  };
  await start();
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start,
    stop: async () => {
      await pgCtl('-w', '-t', '60', '-m', 'fast', 'stop');
    },
    async destroy() {
      await pgCtl('-w', '-t', '60', '-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
