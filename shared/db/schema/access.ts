import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './qa.js';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: serial('id').primaryKey(),
    // The first characters of the key, stored in clear so a lookup finds the row without scanning hashes.
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull().default(''),
    plan: text('plan', { enum: ['authenticated', 'premium'] }).notNull(),
    scopes: text('scopes').array().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    // Signs the deliveries sent for this key (shared/delivery); readable, as signing needs it (migration 0006).
    webhookSecret: text('webhook_secret')
      .notNull()
      .default(sql`agora_new_webhook_secret()`),
  },
  (t) => [uniqueIndex('api_keys_prefix_key').on(t.prefix), index('api_keys_user_idx').on(t.userId)],
);

export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
