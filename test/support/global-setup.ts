import { Redis } from 'ioredis';
import { openDatabase } from '../../shared/db/client.js';
import { migrateDatabase } from '../../shared/db/migrate.js';
import { DATABASE_PREFIX, databaseUrl, REDIS_URL, withAdmin } from './postgres.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Migrates one template database per test run; each test file clones it (CREATE DATABASE … TEMPLATE), which is
 * far faster than migrating per file. Names carry the run's pid so concurrent runs never share a template, and
 * databases left behind by runs that died are dropped here.
 */
export default async function setup() {
  const template = `${DATABASE_PREFIX}_tpl_${process.pid}`;
  await withAdmin(async (sql) => {
    const stale = await sql<
      { datname: string }[]
    >`SELECT datname FROM pg_database WHERE datname ~ ${`^${DATABASE_PREFIX}_(tpl|t)_[0-9]+`}`;
    for (const { datname } of stale) {
      const pid = Number(/_(?:tpl|t)_(\d+)/.exec(datname.slice(DATABASE_PREFIX.length))![1]);
      if (!alive(pid) || datname === template)
        await sql.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await sql.unsafe(`CREATE DATABASE "${template}"`);
  });
  const database = await openDatabase({ databaseUrl: databaseUrl(template), dataDir: '' });
  await migrateDatabase(database);
  await database.close();

  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect().catch(() => {
    throw new Error(`Tests need Redis at ${REDIS_URL}; start it (see .ci/run)`);
  });
  redis.disconnect();

  process.env.AGORA_TEST_TEMPLATE = template;
  return async () => {
    await withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`));
  };
}
