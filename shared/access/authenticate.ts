import { ForbiddenError, UnauthorizedError } from '../errors.js';
import type { Db } from '../db/client.js';
import { apiKeysRepository } from '../db/repositories/api-keys.js';
import { keyMatches, keyPrefix, type Principal, type Scope } from './keys.js';

// last_used_at is informational: writing it once a minute per key keeps reads free of write traffic.
const TOUCH_INTERVAL_MS = 60_000;

export type Authenticator = (rawKey: string | undefined) => Promise<Principal>;

export function createAuthenticator(db: Db): Authenticator {
  const keys = apiKeysRepository(db);
  const touched = new Map<number, number>();

  return async (rawKey) => {
    if (!rawKey) throw new UnauthorizedError('Missing API key');
    const prefix = keyPrefix(rawKey);
    const record = prefix ? await keys.findByPrefix(prefix) : undefined;
    if (!record || !keyMatches(rawKey, record.hash)) throw new UnauthorizedError('Invalid API key');
    if (record.revokedAt) throw new UnauthorizedError('API key has been revoked');

    const now = Date.now();
    if ((touched.get(record.id) ?? 0) < now - TOUCH_INTERVAL_MS) {
      touched.set(record.id, now);
      keys.touch(record.id).catch(() => touched.delete(record.id));
    }
    return { keyId: record.id, userId: record.userId, plan: record.plan, scopes: record.scopes };
  };
}

export function assertScope(principal: Principal | null, scope: Scope): Principal {
  if (!principal) throw new UnauthorizedError('Missing API key');
  if (!principal.scopes.includes(scope) && !principal.scopes.includes('admin')) {
    throw new ForbiddenError(`API key lacks the ${scope} scope`);
  }
  return principal;
}
