import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { isInt4Id } from '../int4.js';
import { apiKeys, users } from '../schema/index.js';
import type { Plan, Scope } from '../../access/keys.js';

export interface ApiKeyRecord {
  id: number;
  prefix: string;
  hash: string;
  userId: number;
  username: string;
  name: string;
  plan: Plan;
  scopes: Scope[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const columns = {
  id: apiKeys.id,
  prefix: apiKeys.prefix,
  hash: apiKeys.hash,
  userId: apiKeys.userId,
  username: users.username,
  name: apiKeys.name,
  plan: apiKeys.plan,
  scopes: apiKeys.scopes,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

export function apiKeysRepository(db: Db) {
  return {
    async insert(row: {
      prefix: string;
      hash: string;
      userId: number;
      plan: Plan;
      scopes: Scope[];
      name: string;
      webhookSecret: string;
    }) {
      const [created] = await db.insert(apiKeys).values(row).returning({ id: apiKeys.id });
      return created!.id;
    },

    async findByPrefix(prefix: string): Promise<ApiKeyRecord | undefined> {
      const [row] = await db
        .select(columns)
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(eq(apiKeys.prefix, prefix));
      return row as ApiKeyRecord | undefined;
    },

    async list(): Promise<ApiKeyRecord[]> {
      const rows = await db
        .select(columns)
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .orderBy(desc(apiKeys.id));
      return rows as ApiKeyRecord[];
    },

    /** True when a live key was revoked; revoking twice or an unknown id changes nothing. */
    async revoke(id: number): Promise<boolean> {
      // An id past int4 names no key (PostgreSQL would refuse it as a parameter).
      if (!isInt4Id(id)) return false;
      const revoked = await db
        .update(apiKeys)
        .set({ revokedAt: sql`now()` })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning({ id: apiKeys.id });
      return revoked.length > 0;
    },

    /** The signing secret of a live key's deliveries; null for an unknown or revoked key. Never listed with keys. */
    async webhookSecret(id: number): Promise<string | null> {
      const [row] = await db
        .select({ secret: apiKeys.webhookSecret })
        .from(apiKeys)
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
      return row?.secret ?? null;
    },

    async touch(id: number): Promise<void> {
      await db
        .update(apiKeys)
        .set({ lastUsedAt: sql`now()` })
        .where(eq(apiKeys.id, id));
    },
  };
}
