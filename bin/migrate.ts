import { bootRuntime, cliLogger, configOrExit } from '../roles/process.js';

/** `npm run migrate`: applies pending migrations (under the advisory lock) and exits. */
const config = configOrExit();
const { runtime } = await bootRuntime(config, cliLogger(config), { migrate: true });
// Named from the configuration, as seed does: beside npm start the embedded database is reached through its owner's
// socket with the PostgreSQL driver, so runtime.database.kind would say "postgres" there.
const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
process.stdout.write(`migrations applied to ${where}\n`);
await runtime.close();
