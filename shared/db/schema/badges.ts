import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { users } from './qa.js';

/** Each badge a user earned (migration 0014); users.badge_* are the per-class counts of these rows. */
export const badgeAwards = pgTable(
  'badge_awards',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    class: text('class', { enum: ['gold', 'silver', 'bronze'] }).notNull(),
    tagBased: boolean('tag_based').notNull().default(false),
    // A question or answer id of the source (no foreign key: it may name either table, or a post not imported).
    postId: integer('post_id'),
    awardedAt: timestamp('awarded_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [
    index('badge_awards_user_idx').on(t.userId, t.awardedAt.desc(), t.id.desc()),
    index('badge_awards_name_idx').on(t.name, t.class, t.tagBased),
    check('badge_awards_class_check', sql`${t.class} IN ('gold', 'silver', 'bronze')`),
    check('badge_awards_name_check', sql`length(${t.name}) BETWEEN 1 AND 200`),
  ],
);
