import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { ADMIN_URL } from '../support/postgres.js';

// A client host cut off from PostgreSQL (no FIN, no RST) must not keep its session, and the locks it holds, for
// the operating system's two-hour keepalive time: bench/multi-host.ts saw a worker host cut off mid-chunk stall its
// list on a row lock until its link came back. The server ends such a session through these per-session TCP settings,
// which only take effect on a TCP connection (the tests' server is on loopback TCP), so they are read back here from
// the server's side of each kind of connection the client opens.

const EXPECTED = {
  tcp_keepalives_idle: '10',
  tcp_keepalives_interval: '5',
  tcp_keepalives_count: '3',
  tcp_user_timeout: '25000',
};

const settingsOf = async (database: Database) =>
  Object.fromEntries(
    (
      await database.query<{ name: string; setting: string }>(
        sql`SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN ${Object.keys(EXPECTED)}`,
      )
    ).map((r) => [r.name, r.setting]),
  );

describe('sessions of a client host that fell silent', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ databaseUrl: ADMIN_URL, dataDir: '' });
  });
  afterAll(() => database?.close());

  it('are ended by the server within seconds: keepalive probes and a user timeout on every pooled session', async () => {
    expect(await settingsOf(database)).toEqual(EXPECTED);
  });

  it('including the session that holds an advisory lock', async () => {
    const seen = await database.withAdvisoryLock(0x5a11e47, () => settingsOf(database));
    expect(seen).toEqual(EXPECTED);
  });
});
