import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Outbound deliveries (migrations 0006 and 0010): one row per enqueued delivery; shared/delivery explains the columns. */
export const deliveries = pgTable(
  'deliveries',
  {
    id: uuid('id').primaryKey(),
    subject: text('subject').notNull(),
    event: text('event').notNull(),
    url: text('url').notNull(),
    secret: text('secret').notNull(),
    body: text('body').notNull(),
    state: text('state', { enum: ['pending', 'delivered', 'failed', 'cancelled'] })
      .notNull()
      .default('pending'),
    round: integer('round').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    backoffMs: integer('backoff_ms').notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    failedAt: timestamp('failed_at', { withTimezone: true }),
    // Null while an outbox row (shared/delivery/outbox.ts) waits to be handed to the queue.
    enqueuedAt: timestamp('enqueued_at', { withTimezone: true }).defaultNow(),
  },
  (t) => [
    index('deliveries_subject_idx').on(t.subject, t.createdAt.desc()),
    index('deliveries_unenqueued_idx')
      .on(t.createdAt)
      .where(sql`${t.enqueuedAt} IS NULL`),
    index('deliveries_pending_idx')
      .on(t.createdAt)
      .where(sql`${t.state} = 'pending'`),
  ],
);

/** The delivery log: one row per HTTP attempt (finished_at null: the worker died during it). */
export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => deliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    status: integer('status'),
    error: text('error'),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);
