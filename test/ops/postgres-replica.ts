import path from 'node:path';
import {
  asPostgresUser,
  PG_BIN,
  runServer,
  serverDirectory,
  type PrivatePostgres,
} from './private-postgres.js';

/**
 * A streaming replica of a private primary (private-postgres.ts): `pg_basebackup -R` copies the primary's data
 * directory and writes the standby settings (standby.signal, primary_conninfo), then a second server runs it on
 * its own port. It replays the primary's WAL as it streams in; it refuses writes.
 */
export async function startReplica(primary: PrivatePostgres, port: number): Promise<PrivatePostgres> {
  const dir = await serverDirectory();
  await asPostgresUser(`${PG_BIN}/pg_basebackup`, [
    '-D',
    path.join(dir, 'data'),
    '-R',
    '-X',
    'stream',
    '--no-sync',
    // An immediate checkpoint: the default spread one paces its writes over checkpoint_timeout and held the
    // backup (and the test) for about 100 s.
    '--checkpoint=fast',
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
  ]);
  return runServer(dir, port);
}
