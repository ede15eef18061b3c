import postgres from 'postgres';

/** The PostgreSQL server the tests run against (trust auth, as on developer machines and CI). */
export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * The first word of every database a test run creates (`<prefix>_tpl_<pid>`, `<prefix>_t_<pid>_<id>`). Runs on a
 * PostgreSQL server shared with others set their own: a run drops the databases of its prefix whose pid is not
 * alive, and a pid in another container's namespace never looks alive.
 */
export const DATABASE_PREFIX = process.env.TEST_DATABASE_PREFIX ?? 'agora';

export const databaseUrl = (name: string): string => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

/** Runs fn with a short-lived admin connection (CREATE/DROP DATABASE cannot run inside a pool's transaction). */
export async function withAdmin<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
