import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { createApiKey } from '../../shared/access/admin.js';
import type { Plan, Scope } from '../../shared/access/keys.js';
import type { Db } from '../../shared/db/client.js';
import { usersRepository } from '../../shared/db/repositories/users.js';

/** A user with one key; the clear key is what a client sends. */
export async function userWithKey(
  db: Db,
  username: string,
  plan: Plan = 'authenticated',
  scopes: Scope[] = ['qa:write'],
) {
  const user =
    (await usersRepository(db).findByUsername(username)) ?? (await usersRepository(db).create({ username }));
  const { key, id } = await createApiKey(db, { username, plan, scopes });
  return { userId: user.id, keyId: id, key };
}

export const limitHeaders = (res: LightMyRequestResponse) => ({
  limit: Number(res.headers['x-ratelimit-limit']),
  remaining: Number(res.headers['x-ratelimit-remaining']),
  reset: Number(res.headers['x-ratelimit-reset']),
});

/** A 429 as the contract says: error body, Retry-After in seconds, and the X-RateLimit-* of the refusing window. */
export function expectRefused(res: LightMyRequestResponse, limit: number) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toEqual({ error: true, message: 'Rate limit exceeded', code: 429 });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  const headers = limitHeaders(res);
  expect(headers.limit).toBe(limit);
  expect(headers.remaining).toBe(0);
  const now = Math.floor(Date.now() / 1000);
  expect(headers.reset).toBeGreaterThan(now - 1);
  expect(headers.reset).toBeLessThanOrEqual(now + retryAfter + 1);
  return retryAfter;
}
