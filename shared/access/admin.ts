import type { Db } from '../db/client.js';
import { apiKeysRepository } from '../db/repositories/api-keys.js';
import { usersRepository } from '../db/repositories/users.js';
import { NotFoundError } from '../errors.js';
import { generateKey, type Plan, type Scope } from './keys.js';
import { generateWebhookSecret } from './webhook-secret.js';

/**
 * Key management shared by the admin CLI and the admin panel. The clear key is returned once, never stored; the
 * webhook secret (which signs the deliveries made for the key) is returned with it, and is not shown again.
 */
export async function createApiKey(
  db: Db,
  input: { username: string; plan: Plan; scopes: Scope[]; name?: string },
) {
  const user = await usersRepository(db).findByUsername(input.username);
  if (!user) throw new NotFoundError(`No user named ${input.username}`);
  const { key, prefix, hash } = generateKey();
  const webhookSecret = generateWebhookSecret();
  const id = await apiKeysRepository(db).insert({
    prefix,
    hash,
    userId: user.id,
    plan: input.plan,
    scopes: input.scopes,
    name: input.name ?? '',
    webhookSecret,
  });
  return { id, key, plan: input.plan, scopes: input.scopes, webhook_secret: webhookSecret };
}
