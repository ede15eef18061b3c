import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const SCOPES = ['qa:write', 'verify', 'webhooks', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
export const PLANS = ['authenticated', 'premium'] as const;
export type Plan = (typeof PLANS)[number];

export interface Principal {
  keyId: number;
  userId: number;
  plan: Plan;
  scopes: Scope[];
}

// agora_<prefix>_<secret>: the prefix finds the row by index; only the SHA-256 of the whole key is stored.
// A hash without salt is enough here: the secret is 256 random bits, not a password.
const KEY_PATTERN = /^agora_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export function generateKey(): { key: string; prefix: string; hash: string } {
  const prefix = randomBytes(9)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')
    .slice(0, 12);
  const key = `agora_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, hash: hashKey(key) };
}

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function keyPrefix(key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null;
}

export function keyMatches(key: string, storedHash: string): boolean {
  const given = Buffer.from(hashKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
