import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { users } from './qa.js';

/** Mirrors migrations 0005 and 0010 (asynchronous verification lists); the SQL lives in repositories/verification-lists.ts. */

export const verificationLists = pgTable(
  'verification_lists',
  {
    id: text('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    keyId: integer('key_id').notNull(),
    name: text('name').notNull().default(''),
    status: text('status', { enum: ['queued', 'running', 'completed', 'cancelled', 'failed'] })
      .notNull()
      .default('queued'),
    total: integer('total').notNull().default(0),
    uniqueCount: integer('unique_count').notNull().default(0),
    processed: integer('processed').notNull().default(0),
    probed: integer('probed').notNull().default(0),
    validCount: integer('valid_count').notNull().default(0),
    invalidCount: integer('invalid_count').notNull().default(0),
    riskyCount: integer('risky_count').notNull().default(0),
    unknownCount: integer('unknown_count').notNull().default(0),
    columns: jsonb('columns'),
    callbackUrl: text('callback_url'),
    idempotencyKey: text('idempotency_key'),
    /** SHA-256 of what a creation with an Idempotency-Key sent (create.ts `fingerprinted`). */
    requestHash: text('request_hash'),
    charged: integer('charged').notNull().default(0),
    chargeWindows: jsonb('charge_windows'),
    maxAgeSec: integer('max_age_sec'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('verification_lists_idempotency_key')
      .on(t.userId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} IS NOT NULL`),
    index('verification_lists_user_idx').on(t.userId, t.createdAt.desc(), t.id.desc()),
    index('verification_lists_active_idx')
      .on(t.status)
      .where(sql`${t.status} IN ('queued', 'running')`),
    check(
      'verification_lists_status_check',
      sql`${t.status} IN ('queued', 'running', 'completed', 'cancelled', 'failed')`,
    ),
  ],
);

export const verificationListRows = pgTable(
  'verification_list_rows',
  {
    listId: text('list_id')
      .notNull()
      .references(() => verificationLists.id, { onDelete: 'cascade' }),
    row: integer('row').notNull(),
    email: text('email').notNull(),
    address: text('address').notNull(),
    fields: jsonb('fields'),
    result: jsonb('result'),
  },
  (t) => [
    primaryKey({ name: 'verification_list_rows_pkey', columns: [t.listId, t.row] }),
    index('verification_list_rows_address_idx').on(t.listId, t.address),
  ],
);

export const verificationListAddresses = pgTable(
  'verification_list_addresses',
  {
    listId: text('list_id')
      .notNull()
      .references(() => verificationLists.id, { onDelete: 'cascade' }),
    address: text('address').notNull(),
    email: text('email').notNull(),
    domain: text('domain').notNull(),
    chunk: integer('chunk'),
    /** Where the address comes in the list's chunks (migration 0019). */
    claimOrder: integer('claim_order'),
    verified: boolean('verified').notNull().default(false),
    retryAt: timestamp('retry_at', { withTimezone: true }),
    deferrals: integer('deferrals').notNull().default(0),
    firstDeferredAt: timestamp('first_deferred_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ name: 'verification_list_addresses_pkey', columns: [t.listId, t.address] }),
    index('verification_list_addresses_unclaimed_idx')
      .on(t.listId, sql`${t.claimOrder} NULLS FIRST`, t.domain, t.address)
      .where(sql`${t.chunk} IS NULL`),
    index('verification_list_addresses_pending_idx')
      .on(t.listId, t.chunk)
      .where(sql`NOT ${t.verified}`),
    index('verification_list_addresses_waiting_idx')
      .on(t.listId, t.retryAt)
      .where(sql`${t.retryAt} IS NOT NULL AND NOT ${t.verified}`),
  ],
);
