import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';

/**
 * The generated app secret in the settings table: `candidate` is stored unless a secret is there already, and the
 * stored one is returned, so concurrent first starts of several processes all end up with the same secret.
 */
export async function storedAppSecret(database: Pick<Database, 'query'>, candidate: string): Promise<string> {
  await database.query(
    sql`INSERT INTO settings (key, value) VALUES ('app_secret', ${JSON.stringify(candidate)}::jsonb) ON CONFLICT (key) DO NOTHING`,
  );
  const [row] = await database.query<{ value: string }>(
    sql`SELECT value FROM settings WHERE key = 'app_secret'`,
  );
  return row!.value;
}
