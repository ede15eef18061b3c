import { createApiKey } from '../../shared/access/admin.js';
import type { Scope } from '../../shared/access/keys.js';
import { users } from '../../shared/db/schema/index.js';
import type { TestRuntime } from '../support/runtime.js';

/** A user and one API key per scope set, created the way the admin panel does. */
export async function createKeys(
  runtime: TestRuntime,
  scopes: Record<string, Scope[]>,
): Promise<Record<string, string>> {
  const username = `verifier${Math.floor(Math.random() * 1e9)}`;
  await runtime.database.db.insert(users).values({ username, displayName: username });
  const keys: Record<string, string> = {};
  for (const [name, list] of Object.entries(scopes)) {
    keys[name] = (
      await createApiKey(runtime.database.db, { username, plan: 'authenticated', scopes: list })
    ).key;
  }
  return keys;
}

/** Environment of a verifier (HTTP app or worker process) pointed at the loopback DNS and SMTP world. */
export function worldEnv(
  dnsEndpoint: string,
  smtpPort: number,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    VERIFY_DNS_SERVERS: dnsEndpoint,
    VERIFY_SMTP_PORT: String(smtpPort),
    VERIFY_ALLOW_PRIVATE_MX: 'true',
    VERIFY_HELO_NAME: 'verifier.agora.test',
    VERIFY_MAIL_FROM: 'probe@agora.test',
    VERIFY_MX_PACING_MS: '0',
    RATE_LIMIT_ENABLED: 'false',
    WORKER_METRICS_PORT: '0',
    ...extra,
  };
}
