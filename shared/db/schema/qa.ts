import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

// Full-text vectors: hand-written migrations' columns (0002; filled by triggers since 0017); drizzle needs the type.
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull(),
    displayName: text('display_name').notNull(),
    avatar: text('avatar').notNull().default(''),
    bio: text('bio').notNull().default(''),
    reputation: integer('reputation').notNull().default(1),
    badgeGold: integer('badge_gold').notNull().default(0),
    badgeSilver: integer('badge_silver').notNull().default(0),
    badgeBronze: integer('badge_bronze').notNull().default(0),
    questionsCount: integer('questions_count').notNull().default(0),
    answersCount: integer('answers_count').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('users_username_key').on(t.username),
    index('users_reputation_idx').on(t.reputation.desc(), t.id.desc()),
    index('users_created_idx').on(t.createdAt.desc(), t.id.desc()),
    // Case-insensitive, by the agora_names collation (migration 0008), with INCLUDE (display_name) since 0035 (not
    // expressible here) so that a deep page's walk is an index-only scan.
    index('users_name_idx').on(sql`(lower(${t.displayName}) COLLATE agora_names)`, t.id),
    index('users_username_trgm').using('gin', sql`${t.username} gin_trgm_ops`),
    index('users_display_name_trgm').using('gin', sql`${t.displayName} gin_trgm_ops`),
  ],
);

export const categories = pgTable(
  'categories',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    description: text('description').notNull().default(''),
    icon: text('icon').notNull().default(''),
    questionsCount: integer('questions_count').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('categories_slug_key').on(t.slug)],
);

export const tags = pgTable(
  'tags',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    description: text('description').notNull().default(''),
    questionsCount: integer('questions_count').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('tags_name_key').on(t.name),
    uniqueIndex('tags_slug_key').on(t.slug),
    index('tags_popular_idx').on(t.questionsCount.desc(), t.id.desc()),
    index('tags_created_idx').on(t.createdAt.desc(), t.id.desc()),
  ],
);

export const questions = pgTable(
  'questions',
  {
    id: serial('id').primaryKey(),
    title: text('title').notNull(),
    slug: text('slug').notNull(),
    content: text('content').notNull(),
    // Markdown source of a post written through the API (content is its sanitised rendering); migration 0008.
    contentMarkdown: text('content_markdown'),
    authorId: integer('author_id')
      .notNull()
      .references(() => users.id),
    categoryId: integer('category_id').references(() => categories.id),
    votes: integer('votes').notNull().default(0),
    views: integer('views').notNull().default(0),
    answersCount: integer('answers_count').notNull().default(0),
    hasAccepted: boolean('has_accepted').notNull().default(false),
    // The accepted answer and when it was accepted, kept with has_accepted by a trigger on answers (migration 0037).
    acceptedAnswerId: integer('accepted_answer_id'),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    // Denormalised tag names, kept by a trigger on question_tags, so the search vector can weight them.
    tagNames: text('tag_names')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('questions_slug_key').on(t.slug),
    index('questions_newest_idx').on(t.createdAt.desc(), t.id.desc()),
    index('questions_votes_idx').on(t.votes.desc(), t.id.desc()),
    index('questions_views_idx').on(t.views.desc(), t.id.desc()),
    index('questions_unanswered_idx')
      .on(t.createdAt.desc(), t.id.desc())
      .where(sql`${t.answersCount} = 0`),
    index('questions_category_newest_idx').on(t.categoryId, t.createdAt.desc(), t.id.desc()),
    index('questions_category_votes_idx').on(t.categoryId, t.votes.desc(), t.id.desc()),
    index('questions_category_views_idx').on(t.categoryId, t.views.desc(), t.id.desc()),
    index('questions_category_unanswered_idx')
      .on(t.categoryId, t.createdAt.desc(), t.id.desc())
      .where(sql`${t.answersCount} = 0`),
    index('questions_author_idx').on(t.authorId),
  ],
);

export const questionTags = pgTable(
  'question_tags',
  {
    questionId: integer('question_id')
      .notNull()
      .references(() => questions.id, { onDelete: 'cascade' }),
    tagId: integer('tag_id')
      .notNull()
      .references(() => tags.id, { onDelete: 'cascade' }),
    // The question's sort keys, filled and followed by triggers (migration 0009) so that a tag's questions come in
    // every sort order from one index: write question_id and tag_id only.
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' })
      .notNull()
      .default(sql`'-infinity'`),
    votes: integer('votes').notNull().default(0),
    views: integer('views').notNull().default(0),
    answersCount: integer('answers_count').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.tagId, t.questionId] }),
    index('question_tags_question_idx').on(t.questionId),
    index('question_tags_newest_idx').on(t.tagId, t.createdAt.desc(), t.questionId.desc()),
    index('question_tags_votes_idx').on(t.tagId, t.votes.desc(), t.questionId.desc()),
    index('question_tags_views_idx').on(t.tagId, t.views.desc(), t.questionId.desc()),
    index('question_tags_unanswered_idx')
      .on(t.tagId, t.createdAt.desc(), t.questionId.desc())
      .where(sql`${t.answersCount} = 0`),
  ],
);

/**
 * Exact totals of the lists that have no counter column of their own, kept by deferred triggers in the write's
 * transaction (migration 0009). Scopes: 'questions', 'questions:unanswered', 'users', 'tags', 'tag:<id>:unanswered',
 * 'category:<id>:unanswered'.
 */
export const listCounts = pgTable('list_counts', {
  scope: text('scope').primaryKey(),
  n: bigint('n', { mode: 'number' }).notNull().default(0),
});

export const answers = pgTable(
  'answers',
  {
    id: serial('id').primaryKey(),
    questionId: integer('question_id')
      .notNull()
      .references(() => questions.id, { onDelete: 'cascade' }),
    authorId: integer('author_id')
      .notNull()
      .references(() => users.id),
    content: text('content').notNull(),
    // Markdown source of a post written through the API (content is its sanitised rendering); migration 0008.
    contentMarkdown: text('content_markdown'),
    votes: integer('votes').notNull().default(0),
    isAccepted: boolean('is_accepted').notNull().default(false),
    // Set by a trigger when is_accepted turns true (migration 0011).
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('answers_question_idx').on(t.questionId, t.votes.desc(), t.id),
    index('answers_author_idx').on(t.authorId),
    uniqueIndex('answers_one_accepted_key')
      .on(t.questionId)
      .where(sql`${t.isAccepted}`),
  ],
);

export const comments = pgTable(
  'comments',
  {
    id: serial('id').primaryKey(),
    questionId: integer('question_id').references(() => questions.id, { onDelete: 'cascade' }),
    answerId: integer('answer_id').references(() => answers.id, { onDelete: 'cascade' }),
    authorId: integer('author_id')
      .notNull()
      .references(() => users.id),
    content: text('content').notNull(),
    // Markdown source of a post written through the API (content is its sanitised rendering); migration 0008.
    contentMarkdown: text('content_markdown'),
    votes: integer('votes').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    index('comments_question_idx').on(t.questionId, t.createdAt, t.id),
    index('comments_answer_idx').on(t.answerId, t.createdAt, t.id),
    check('comments_one_parent', sql`(${t.questionId} IS NULL) <> (${t.answerId} IS NULL)`),
  ],
);

export const votes = pgTable(
  'votes',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    questionId: integer('question_id').references(() => questions.id, { onDelete: 'cascade' }),
    answerId: integer('answer_id').references(() => answers.id, { onDelete: 'cascade' }),
    value: smallint('value').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('votes_user_question_key')
      .on(t.userId, t.questionId)
      .where(sql`${t.questionId} IS NOT NULL`),
    uniqueIndex('votes_user_answer_key')
      .on(t.userId, t.answerId)
      .where(sql`${t.answerId} IS NOT NULL`),
    index('votes_question_idx').on(t.questionId),
    index('votes_answer_idx').on(t.answerId),
    check('votes_one_target', sql`(${t.questionId} IS NULL) <> (${t.answerId} IS NULL)`),
    check('votes_value', sql`${t.value} IN (-1, 1)`),
  ],
);
