import postgres from 'postgres';
import { deleteKeys } from './redis.js';

export const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const benchDatabaseUrl = (name: string): string =>
  Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

/** One short-lived connection to `url` for `fn`, closed whatever happens. */
export async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Waits (up to a minute) until no statement runs on `database`: a load run ends with its last requests still being
 * executed, and their cost belongs to that run, not to the next one measured.
 */
export async function waitUntilIdle(database: string): Promise<void> {
  await withSql(ADMIN_URL, async (sql) => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${database} AND state = 'active' AND pid <> pg_backend_pid()`;
      if (!row?.n) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}

function checkName(name: string): void {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe database name ${name}`);
}

/** Drops (forcing out connections) and re-creates a dedicated bench database; returns its URL. */
export async function recreateDatabase(name: string): Promise<string> {
  checkName(name);
  await withSql(ADMIN_URL, async (sql) => {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await sql.unsafe(`CREATE DATABASE "${name}"`);
  });
  return benchDatabaseUrl(name);
}

/** Drops a bench database, forcing out whatever is still connected. */
export async function dropDatabase(name: string): Promise<void> {
  checkName(name);
  await withSql(ADMIN_URL, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** A bench's clean start: its database recreated and its Redis keys (under queuePrefix) deleted; returns the URL. */
export async function resetBenchState(database: string, queuePrefix: string): Promise<string> {
  const url = await recreateDatabase(database);
  await deleteKeys(queuePrefix);
  return url;
}
