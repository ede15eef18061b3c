import { Type, type TSchema } from '@fastify/type-provider-typebox';
import { nameComponents } from '../http/components.js';
import { ErrorResponse } from '../http/errors.js';
import { MAX_INT4 } from '../../shared/db/int4.js';
import { MAX_CURSOR_LENGTH } from '../../shared/db/repositories/cursor.js';

/** Response and parameter schemas shared by the Q&A routes; they also generate the OpenAPI document. */

// Declared once for both services; re-exported for the routes that import their schemas from here.
export { ErrorResponse };

export const success = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });

export const Category = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Type.String(),
  questions_count: Type.Integer(),
  icon: Type.String({ description: 'An icon class name' }),
});

// ---- parameters ----------------------------------------------------------------------------------------------

/** A row id: an int4 from 1. Larger numbers can name no row and are a 400, never a failed query. */
export const Id = (description?: string) => Type.Integer({ minimum: 1, maximum: MAX_INT4, description });

/** Page numbers past this are refused rather than sent to PostgreSQL as enormous offsets. */
export const MAX_PAGE = 1_000_000;
export const DEFAULT_LIMIT = 20;

export const Page = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE,
  default: 1,
  description: '1-based page number',
});
export const Limit = Type.Integer({
  minimum: 1,
  maximum: 100,
  default: DEFAULT_LIMIT,
  description: 'Items per page (1-100)',
});

/** An opaque position in a list: the next_cursor of the previous page, passed back unchanged. */
export const Cursor = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: MAX_CURSOR_LENGTH,
    pattern: '^[A-Za-z0-9_-]+$',
    description:
      "The previous page's next_cursor: the page after it, by key, unaffected by rows written meanwhile (page is then ignored)",
  }),
);

/** A string enum with its default; an unknown value is a 400, never silently replaced. */
export const OneOf = <const T extends readonly string[]>(
  values: T,
  fallback: T[number],
  description?: string,
) => Type.Enum([...values] as T[number][], { default: fallback, description });

/** `fromdate`, `todate`, `min`, `max`, `order` of the question, answer, comment and user lists (windows.ts). */
const Instant = (description: string) =>
  Type.Optional(
    Type.String({ minLength: 1, maxLength: 40, description: `${description}: ISO 8601 or Unix seconds` }),
  );
const KeyBound = (description: string) =>
  Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: `${description}, inclusive, on the sort's key: a number (votes, views, reputation), a date (creation: ISO 8601 or Unix seconds) or a name`,
    }),
  );
export const WindowQuery = {
  fromdate: Instant('Created at or after'),
  todate: Instant('Created at or before'),
  min: KeyBound('Lowest value'),
  max: KeyBound('Highest value'),
  order: Type.Optional(
    Type.Enum(['asc', 'desc'], {
      description: "The sort's direction (default: the sort's own, desc for most)",
    }),
  ),
};

/** `{id}` of the routes that take several ids: up to 100 ids separated by `;` (ids.ts). */
export const IdsParam = (what: string) =>
  Type.Object({
    id: Type.String({
      minLength: 1,
      maxLength: 1100,
      pattern: '^[0-9]+(;[0-9]+)*$',
      description: `${what} id, or up to 100 ids separated by ";"`,
    }),
  });

// ---- resources -----------------------------------------------------------------------------------------------

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });

export const Pagination = Type.Object({
  current_page: Type.Integer(),
  total_pages: Type.Integer({ description: 'ceil(total_items / per_page)' }),
  total_items: Type.Integer(),
  per_page: Type.Integer(),
  has_more: Type.Boolean({
    description:
      'Whether a next page exists: exactly `next_cursor !== null` on the lists with cursors; on search, whether ' +
      'a later page has items (current_page < total_pages). False on the last page, on an empty list and past the end',
  }),
  next_cursor: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'Pass as `cursor` for the next page; null on the last page. Every list but search has one.',
    }),
  ),
  total_bounded: Type.Optional(
    Type.Boolean({
      description:
        'Present (true) when a filtered list without a counter of its own reached the counting bound (10,000): ' +
        'total_items is then a lower bound, and the rows past it are reached by cursor',
    }),
  ),
});

/** `content` is always safe HTML; `content_markdown` is the Markdown source of posts written through the API. */
const Content = {
  content: Type.String({ description: 'Safe HTML (sanitised with one allow-list); insert it as HTML' }),
  content_markdown: Type.Optional(
    Type.String({
      description: 'The Markdown source, for posts written through the API (not imported ones)',
    }),
  ),
};

export const Question = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  slug: Type.String({
    description: 'URL-safe form of the title; GET /questions/{slug} works as well as the id',
  }),
  ...Content,
  votes: Type.Integer(),
  views: Type.Integer(),
  answers_count: Type.Integer(),
  has_accepted: Type.Boolean(),
  author: Type.Object({
    id: Type.Integer(),
    username: Type.String(),
    avatar: Type.String({ description: 'URL' }),
  }),
  tags: Type.Array(Type.String(), { description: 'Tag names' }),
  created_at: Timestamp,
});

const PostAuthor = Type.Object({ id: Type.Integer(), username: Type.String() });

export const Comment = Type.Object({
  id: Type.Integer(),
  ...Content,
  votes: Type.Integer(),
  author: PostAuthor,
  created_at: Timestamp,
});

export const Answer = Type.Object({
  id: Type.Integer(),
  ...Content,
  votes: Type.Integer(),
  is_accepted: Type.Boolean(),
  author: PostAuthor,
  created_at: Timestamp,
});

export const AnswerWithComments = Type.Object({
  ...Answer.properties,
  comments: Type.Optional(Type.Array(Comment)),
});

export const QuestionDetail = Type.Object({
  ...Question.properties,
  answers: Type.Optional(Type.Array(AnswerWithComments, { description: 'With include=answers' })),
  comments: Type.Optional(
    Type.Array(Comment, { description: "With include=comments: the question's comments" }),
  ),
});

export const User = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  display_name: Type.String(),
  avatar: Type.String({ description: 'URL' }),
  bio: Type.String(),
  reputation: Type.Integer(),
  badges: Type.Object({ gold: Type.Integer(), silver: Type.Integer(), bronze: Type.Integer() }),
  questions_count: Type.Integer(),
  answers_count: Type.Integer(),
  joined_at: Timestamp,
});

export const AnswerOnQuestion = Type.Object({
  ...Answer.properties,
  question_id: Type.Integer(),
  question_title: Type.String(),
  question_slug: Type.String(),
});

export const CommentOnPost = Type.Object({
  ...Comment.properties,
  post_type: Type.Enum(['question', 'answer']),
  post_id: Type.Integer({ description: 'The question or answer commented on' }),
  question_id: Type.Integer({ description: "The post's question" }),
});

export const Tag = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Type.String(),
  questions_count: Type.Integer(),
});

export const TagDetail = Type.Object({
  ...Tag.properties,
  unanswered_count: Type.Integer(),
  created_at: Timestamp,
});

export const RelatedTag = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  questions_count: Type.Integer(),
  together: Type.Integer({ description: 'Questions (of those considered) that carry both tags' }),
});

export const TopAnswerer = Type.Object({
  user: Type.Object({
    id: Type.Integer(),
    username: Type.String(),
    display_name: Type.String(),
    avatar: Type.String(),
    reputation: Type.Integer(),
  }),
  answer_score: Type.Integer({ description: "Sum of the votes of the user's answers in the tag" }),
  answer_count: Type.Integer(),
});

export const UserTag = Type.Object({
  name: Type.String(),
  slug: Type.String(),
  answer_score: Type.Integer(),
  answer_count: Type.Integer(),
  question_score: Type.Integer(),
  question_count: Type.Integer(),
});

export const BadgeClass = Type.Enum(['gold', 'silver', 'bronze']);

export const BadgeAward = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  name: Type.String(),
  class: BadgeClass,
  tag_based: Type.Boolean({ description: 'A tag badge (its name is the tag)' }),
  post_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The question or answer it was earned for, when known',
  }),
  awarded_at: Timestamp,
});

export const SiteBadge = Type.Object({
  name: Type.String(),
  class: BadgeClass,
  tag_based: Type.Boolean(),
  award_count: Type.Integer({ description: 'How many times it was awarded' }),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const TimelineEvent = Type.Object({
  type: Type.Enum(['question', 'answer', 'comment', 'accepted', 'badge'], {
    description:
      'accepted: the user accepted an answer (id) on their question; badge: the user earned a badge',
  }),
  user_id: Type.Integer({ description: 'Whose event it is (for accepted, the asker)' }),
  id: Type.Integer({
    description: 'The question, answer or comment; for accepted, the answer; for badge, the award',
  }),
  question_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The question of the post; null for a badge earned for no post',
  }),
  question_title: NullableString,
  question_slug: NullableString,
  badge: Type.Optional(
    Type.Object(
      { name: Type.String(), class: BadgeClass, tag_based: Type.Boolean() },
      { description: 'For badge events only' },
    ),
  ),
  created_at: Timestamp,
});

export const DayActivity = Type.Object({
  date: Type.String({ description: 'A UTC day, YYYY-MM-DD' }),
  questions: Type.Integer(),
  answers: Type.Integer(),
  comments: Type.Integer(),
});

export const SiteInfo = Type.Object({
  totals: Type.Object({
    questions: Type.Integer(),
    answers: Type.Integer(),
    comments: Type.Integer(),
    users: Type.Integer(),
    unanswered: Type.Integer(),
    accepted_rate: Type.Number({ description: 'Questions with an accepted answer ÷ questions, 4 decimals' }),
  }),
  activity: Type.Array(DayActivity, { description: 'The last 30 UTC days, oldest first, today included' }),
  newest_question: Type.Union([Question, Type.Null()]),
  newest_answer: Type.Union([AnswerOnQuestion, Type.Null()]),
});

const Score = Type.Number({ description: 'Relevance in [0, 1), comparable across result types' });
const Excerpt = Type.String({ description: 'HTML: escaped text with the matched words in <mark> elements' });

export const QuestionResult = Type.Object({
  type: Type.Literal('question'),
  id: Type.Integer(),
  score: Score,
  title: Type.String(),
  slug: Type.String(),
  excerpt: Excerpt,
  votes: Type.Integer(),
  answers_count: Type.Integer(),
  has_accepted: Type.Boolean(),
  tags: Type.Array(Type.String()),
  created_at: Timestamp,
});

export const AnswerResult = Type.Object({
  type: Type.Literal('answer'),
  id: Type.Integer(),
  score: Score,
  question_id: Type.Integer(),
  question_title: Type.String(),
  question_slug: Type.String(),
  excerpt: Excerpt,
  votes: Type.Integer(),
  is_accepted: Type.Boolean(),
  created_at: Timestamp,
});

export const UserResult = Type.Object({
  type: Type.Literal('user'),
  id: Type.Integer(),
  score: Score,
  username: Type.String(),
  display_name: Type.String(),
  avatar: Type.String(),
  reputation: Type.Integer(),
});

export const SearchResult = Type.Union([QuestionResult, AnswerResult, UserResult]);

// Named components of the OpenAPI document (services/http/components.ts).
nameComponents({ Error: ErrorResponse, Category, Pagination, Question, Comment, Answer, AnswerWithComments });
nameComponents({ QuestionDetail, User, Tag, QuestionResult, AnswerResult, UserResult, SearchResult });
nameComponents({
  AnswerOnQuestion,
  CommentOnPost,
  TagDetail,
  RelatedTag,
  TopAnswerer,
  UserTag,
  TimelineEvent,
});
nameComponents({ DayActivity, SiteInfo, BadgeAward, SiteBadge });
