import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerListsRepository } from '../../../shared/db/repositories/answer-lists.js';
import { commentListsRepository } from '../../../shared/db/repositories/comment-lists.js';
import { MAX_TAGS, QUESTION_SORTS, questionsRepository } from '../../../shared/db/repositories/questions.js';
import { USER_TAG_SORTS, userActivityRepository } from '../../../shared/db/repositories/user-activity.js';
import { sendData } from '../../http/json-response.js';
import type { QaDeps } from '../deps.js';
import {
  Cursor,
  ErrorResponse,
  IdsParam,
  Limit,
  OneOf,
  Page,
  Pagination,
  Question,
  success,
  TimelineEvent,
  UserTag,
  WindowQuery,
} from '../schemas.js';
import { AnswerList, AnswerListQuery } from './answers.js';
import { CommentList, commentListQuery } from './comments.js';
import { knownUsers } from './user-ids.js';

// Like GET /users/{ids}: one id past int4 names no user (404); not an integer is a 400; several ids are merged.
const UserKey = IdsParam('User');
const SEVERAL = ' With several ids (`3;8;2`, at most 100): theirs merged, unknown ids left out.';

/** A user's questions, answers, comments, tags and timeline (issue 19); 404 for an unknown user. */
export const userActivityRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const db = deps.database.db;
  const questions = questionsRepository(db);
  const answers = answerListsRepository(db);
  const comments = commentListsRepository(db);
  const activity = userActivityRepository(db);
  const users = knownUsers(db);

  app.get(
    '/users/:id/questions',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's questions",
        description:
          'The sorts, filters and windows of GET /questions, for the questions the user asked.' + SEVERAL,
        params: UserKey,
        querystring: Type.Object({
          sort: OneOf(QUESTION_SORTS, 'newest'),
          page: Page,
          limit: Limit,
          cursor: Cursor,
          tag: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 504,
              description: `Tag slug, or up to ${MAX_TAGS} separated by ";"`,
            }),
          ),
          ...WindowQuery,
        }),
        response: {
          200: success(Type.Object({ questions: Type.Array(Question), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const author = await users.resolve(request.params.id);
      // The declared parameters only: the validator keeps undeclared ones (`category` here), which the question
      // list would otherwise take as filters it never validated.
      const { sort, page, limit, cursor, tag, fromdate, todate, min, max, order } = request.query;
      return sendData(
        reply,
        await questions.list({ sort, page, limit, cursor, tag, fromdate, todate, min, max, order, author }),
      );
    },
  );

  app.get(
    '/users/:id/answers',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's answers",
        description: 'votes: best voted first; newest (default) and oldest by creation.' + SEVERAL,
        params: UserKey,
        querystring: AnswerListQuery,
        response: { 200: AnswerList, '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const id = await users.resolve(request.params.id);
      return { success: true as const, data: await answers.forUser(id, request.query) };
    },
  );

  app.get(
    '/users/:id/comments',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's comments, newest first",
        description: SEVERAL.trim(),
        params: UserKey,
        querystring: commentListQuery('newest'),
        response: { 200: CommentList, '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const id = await users.resolve(request.params.id);
      return { success: true as const, data: await comments.list({ kind: 'user', id }, request.query) };
    },
  );

  app.get(
    '/users/:id/tags',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "The tags of a user's posts, by answer score",
        description:
          'score (default): the sum of the votes of the user’s answers in the tag, then answer count; count: answer ' +
          'count first. Ties: tag id. Tags the user only asked in come last (answer score and count 0). With several ' +
          'ids (`3;8;2`, at most 100): the sums over their posts, unknown ids left out.',
        params: UserKey,
        querystring: Type.Object({ sort: OneOf(USER_TAG_SORTS, 'score'), limit: Limit }),
        response: { 200: success(Type.Object({ tags: Type.Array(UserTag) })), '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const id = await users.resolve(request.params.id);
      return {
        success: true as const,
        data: { tags: await activity.tags(id, request.query.sort, request.query.limit) },
      };
    },
  );

  app.get(
    '/users/:id/timeline',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's timeline, newest first, or several users' by ids",
        description:
          'Questions asked, answers posted, comments, answers accepted on their questions, and badges earned; newest ' +
          'first (ties: badge, accepted, comment, answer, question, then id descending). With several ids (`3;8;2`, ' +
          'at most 100): their events merged, unknown ids left out. Walk it with next_cursor (null, and has_more false, at the end); ' +
          'there is no page number or total.',
        params: UserKey,
        querystring: Type.Object({ limit: Limit, cursor: Cursor }),
        response: {
          200: success(
            Type.Object({
              events: Type.Array(TimelineEvent),
              next_cursor: Type.Union([Type.String(), Type.Null()]),
              has_more: Type.Boolean({ description: 'Whether a next page exists: next_cursor !== null' }),
            }),
          ),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const ids = await users.resolve(request.params.id);
      return { success: true as const, data: await activity.timeline(ids, request.query) };
    },
  );
};
