import postgres from 'postgres';

export const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const benchDatabaseUrl = (name: string): string =>
  Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

/** Drops (forcing out connections) and re-creates a dedicated bench database; returns its URL. */
export async function recreateDatabase(name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await sql.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  return benchDatabaseUrl(name);
}
