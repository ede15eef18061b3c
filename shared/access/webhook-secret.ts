import { randomBytes } from 'node:crypto';
import type { Database } from '../db/client.js';
import { apiKeysRepository } from '../db/repositories/api-keys.js';

/**
 * Each API key has a webhook secret: the HMAC key of the deliveries (list callbacks, Q&A webhooks) made for it,
 * which its owner uses to check X-Agora-Signature (docs/webhooks.md). Unlike the key it is stored in clear, since
 * every delivery signs with it; it is shown once, when the key is created.
 */

const PREFIX = 'whsec_';

/** 32 random bytes, hex, with a prefix that says what the string is when it turns up in a config file. */
export const generateWebhookSecret = (): string => `${PREFIX}${randomBytes(32).toString('hex')}`;

/** The secret that signs deliveries for a key; null when the key is unknown or revoked (nothing is sent then). */
export function webhookSecretForKey(database: Database, keyId: number): Promise<string | null> {
  return apiKeysRepository(database.db).webhookSecret(keyId);
}
