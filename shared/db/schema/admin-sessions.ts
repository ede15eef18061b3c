import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Server-side admin sessions (migration 0007); id is the SHA-256 of the session id in the cookie. */
export const adminSessions = pgTable(
  'admin_sessions',
  {
    id: text('id').primaryKey(),
    tokenFingerprint: text('token_fingerprint').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('admin_sessions_expires_idx').on(t.expiresAt)],
);
