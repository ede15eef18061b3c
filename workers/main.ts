import { main } from '../bin/start.js';

/**
 * The worker process: `tsx workers/main.ts --queues verify,ai` (or WORKER_QUEUES) serves those queues; with
 * neither, all of them. Same boot and shutdown as every role, through bin/start.
 */
main(['--role', 'workers', ...process.argv.slice(2)]).catch((err) => {
  process.stderr.write(`agora workers failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
