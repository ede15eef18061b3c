import { fileURLToPath } from 'node:url';
import type { Database } from './client.js';

const MIGRATIONS_FOLDER = fileURLToPath(new URL('./migrations', import.meta.url));
// Any fixed number shared by every replica; "agora" in ASCII.
const MIGRATION_LOCK = 0x61676f72;

/** Applies pending migrations; replicas starting together queue on the advisory lock instead of racing. */
export async function migrateDatabase(database: Database): Promise<void> {
  await database.withAdvisoryLock(MIGRATION_LOCK, async () => {
    if (database.kind === 'postgres') {
      const { migrate } = await import('drizzle-orm/postgres-js/migrator');
      await migrate(database.db as never, { migrationsFolder: MIGRATIONS_FOLDER });
    } else {
      const { migrate } = await import('drizzle-orm/pglite/migrator');
      await migrate(database.db as never, { migrationsFolder: MIGRATIONS_FOLDER });
    }
  });
}
