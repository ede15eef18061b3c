import { startRoles } from '../roles/start.js';

/**
 * Entry point of every role: `bin/start.ts` runs both services and every worker in one process (the local
 * default, `npm start`); `--role qa|verify|workers` runs one alone (roles/start.ts).
 */
startRoles(process.argv.slice(2)).catch((err) => {
  const { code, port } = (err ?? {}) as { code?: string; port?: number };
  process.stderr.write(
    code === 'EADDRINUSE'
      ? `agora failed to start: port ${port} is already in use. Is Agora (npm start) already running? ` +
          'Stop it, or give this one other ports (QA_PORT, VERIFY_PORT).\n'
      : `agora failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
