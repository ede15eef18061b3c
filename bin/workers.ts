import { startRoles } from '../roles/start.js';

/**
 * Entry point of a worker process: `bin/workers.ts --queues verify,ai` (or WORKER_QUEUES) serves those queues;
 * with neither, all of them. The same start-up and shutdown as every role (roles/start.ts).
 */
startRoles(['--role', 'workers', ...process.argv.slice(2)]).catch((err) => {
  process.stderr.write(`agora workers failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
