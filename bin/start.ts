import { startRoles } from '../roles/start.js';

/**
 * Entry point of every role: `bin/start.ts` runs both services and every worker in one process (the local
 * default, `npm start`); `--role qa|verify|workers` runs one alone (roles/start.ts).
 */
startRoles(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`agora failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
