import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { storedAppSecret } from './db/repositories/app-secret.js';

/**
 * The key behind every signature (newsletter links, admin session cookies). APP_SECRET when set; otherwise one
 * random secret created on first use and kept in the settings table, so every process and restart agrees.
 */
export async function loadAppSecret(config: Pick<Config, 'appSecret'>, database: Database): Promise<string> {
  if (config.appSecret) return config.appSecret;
  return storedAppSecret(database, randomBytes(32).toString('base64url'));
}

/** Signs `payload` (purpose-scoped, so a token for one use is worthless for another) and verifies it back. */
export function createSigner(secret: string) {
  const mac = (purpose: string, payload: string) =>
    createHmac('sha256', secret).update(`${purpose}\n${payload}`).digest('base64url');
  return {
    sign(purpose: string, payload: string): string {
      return `${Buffer.from(payload).toString('base64url')}.${mac(purpose, payload)}`;
    },
    /** The payload when the token is intact and was made for this purpose; otherwise null. */
    verify(purpose: string, token: string): string | null {
      const [encoded, signature] = token.split('.');
      if (!encoded || !signature) return null;
      const payload = Buffer.from(encoded, 'base64url').toString();
      const expected = Buffer.from(mac(purpose, payload));
      const given = Buffer.from(signature);
      return expected.length === given.length && timingSafeEqual(expected, given) ? payload : null;
    },
  };
}

/** Names of stored values that are credentials (the generated `app_secret`, any *_token, *_key, *_password). */
export const isSecretName = (name: string): boolean => /secret|token|password|(^|_)key$/i.test(name);

/** What a CLI or page shows instead of a secret: that it is set, and its length, never a character of it. */
export function maskSecret(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `(hidden, ${text.length} characters)`;
}
