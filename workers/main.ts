import { startRoles } from '../roles/start.js';

/**
 * The worker process under its older path, kept so that existing commands and scripts go on working; the
 * entry point is bin/workers.ts (same arguments, same start-up: roles/start.ts).
 */
startRoles(['--role', 'workers', ...process.argv.slice(2)]).catch((err) => {
  process.stderr.write(`agora workers failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
