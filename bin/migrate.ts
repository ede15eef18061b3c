import { bootRuntime, cliLogger, configOrExit } from '../roles/process.js';

/** `npm run migrate`: applies pending migrations (under the advisory lock) and exits. */
const config = configOrExit();
const { runtime } = await bootRuntime(config, cliLogger(config), { migrate: true });
process.stdout.write(`migrations applied (${runtime.database.kind})\n`);
await runtime.close();
