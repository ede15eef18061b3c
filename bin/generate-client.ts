import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientTypes, TYPES_DIR } from '../clients/typescript/generate.js';
import { openApiDocuments } from '../services/openapi-documents.js';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { openRuntime } from '../shared/runtime.js';

/**
 * `npm run client:generate`: builds both apps in this process (nothing listens), takes the OpenAPI documents they
 * serve and writes clients/typescript/src/{qa,verify}.d.ts. It needs no running service: the apps get a new
 * embedded database in a temporary directory (the documents do not depend on data) and a Redis connection that is
 * never asked anything (REDIS_URL or 127.0.0.1:6379; it may be absent).
 */
async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-client-'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_ENABLED: 'false',
  };
  delete env.DATABASE_URL;
  const config = loadConfig(env);
  const runtime = await openRuntime(
    config,
    createLogger('silent', 'client-generate'),
    config.redisUrl ?? 'redis://127.0.0.1:6379',
    {
      migrate: true,
    },
  );
  try {
    const files = await clientTypes(await openApiDocuments(runtime));
    for (const [name, contents] of Object.entries(files)) {
      writeFileSync(path.join(TYPES_DIR, name), contents);
      process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(TYPES_DIR, name))}\n`);
    }
  } finally {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`client:generate failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
