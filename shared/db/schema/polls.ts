import {
  boolean,
  index,
  integer,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
  bigserial,
} from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { questions, users } from './qa.js';

export const polls = pgTable(
  'polls',
  {
    id: serial('id').primaryKey(),
    questionId: integer('question_id').references(() => questions.id, { onDelete: 'cascade' }),
    authorId: integer('author_id').references(() => users.id),
    title: text('title').notNull(),
    allowChange: boolean('allow_change').notNull().default(false),
    closedAt: timestamp('closed_at', { withTimezone: true }),
    // Set by the polls worker each time it writes the options' tallies.
    talliedAt: timestamp('tallied_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // The polls worker's `close` job: polls whose closing time has passed since their last tally.
  (t) => [
    index('polls_closing_idx')
      .on(t.closedAt, t.id)
      .where(sql`${t.closedAt} IS NOT NULL`),
  ],
);

export const pollOptions = pgTable(
  'poll_options',
  {
    id: serial('id').primaryKey(),
    pollId: integer('poll_id')
      .notNull()
      .references(() => polls.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
    position: integer('position').notNull().default(0),
    votes: integer('votes').notNull().default(0),
  },
  (t) => [index('poll_options_poll_idx').on(t.pollId, t.position)],
);

export const pollVotes = pgTable(
  'poll_votes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pollId: integer('poll_id')
      .notNull()
      .references(() => polls.id, { onDelete: 'cascade' }),
    optionId: integer('option_id')
      .notNull()
      .references(() => pollOptions.id, { onDelete: 'cascade' }),
    // 'user:<id>' for a key's user, 'client:<hash>' for an anonymous client.
    voter: text('voter').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('poll_votes_voter_key').on(t.pollId, t.voter),
    index('poll_votes_option_idx').on(t.optionId),
  ],
);
