import { sql } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { BEER_DUMP_DIR } from '../datasets.js';
import type { Logger } from '../logger.js';
import { importStackExchange } from '../stackexchange/import.js';

/**
 * A newcomer's first `npm start` shows a site, not `{"categories":[]}`: an embedded database with no users and
 * no questions gets the bundled beer.stackexchange.com dump. A server database (DATABASE_URL) is an operator's and
 * is never touched; DEMO_DATA=false opts out.
 */
export async function loadDemoDataIfEmpty(
  config: Config,
  database: Database,
  logger: Logger,
): Promise<boolean> {
  if (config.databaseUrl || database.kind !== 'pglite' || !config.demoData) return false;
  const [counts] = await database.query<{ users: number; questions: number }>(
    sql`SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM questions)::int AS questions`,
  );
  if (counts!.users > 0 || counts!.questions > 0) return false;
  logger.info({ dump: 'data/stackexchange-beer' }, 'empty embedded database: loading the demo data');
  const { loaded, seconds } = await importStackExchange(database, BEER_DUMP_DIR);
  logger.info(
    { questions: loaded.questions, answers: loaded.answers, users: loaded.users, seconds },
    'demo data loaded',
  );
  return true;
}
