import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Batches of question views already added to questions.views by the views worker. The batch id is the last guard
 * against counting a batch twice: a flush retried after a crash between its commit and the deletion of its Redis
 * key finds its id here and only deletes the key. Rows older than a day are pruned by the flush itself.
 */
export const viewBatches = pgTable('view_batches', {
  id: text('id').primaryKey(),
  appliedAt: timestamp('applied_at', { withTimezone: true }).notNull().defaultNow(),
});
