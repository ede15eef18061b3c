import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  COMMENT_SORTS,
  commentListsRepository,
  type CommentScope,
  type CommentSort,
} from '../../../shared/db/repositories/comment-lists.js';
import { questionsRepository } from '../../../shared/db/repositories/questions.js';
import { answerListsRepository } from '../../../shared/db/repositories/answer-lists.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import {
  CommentOnPost,
  Cursor,
  ErrorResponse,
  Limit,
  OneOf,
  Page,
  Pagination,
  success,
  WindowQuery,
} from '../schemas.js';

/** The query of a comment list; `fallback` is the list's own sort. */
export const commentListQuery = (fallback: CommentSort) =>
  Type.Object({
    sort: OneOf(COMMENT_SORTS, fallback, 'newest, oldest (by creation) or votes'),
    page: Page,
    limit: Limit,
    cursor: Cursor,
    ...WindowQuery,
  });

export const CommentList = success(
  Type.Object({ comments: Type.Array(CommentOnPost), pagination: Pagination }),
);

/** GET /comments, /questions/{id}/comments, /answers/{id}/comments (a user's: user-activity.ts). */
export const commentsRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const comments = commentListsRepository(deps.database.db);
  const questions = questionsRepository(deps.database.db);
  const answers = answerListsRepository(deps.database.db);
  const list = async (scope: CommentScope, query: Parameters<typeof comments.list>[1]) => ({
    success: true as const,
    data: await comments.list(scope, query),
  });

  app.get(
    '/comments',
    {
      config: { readCache: true },
      schema: {
        tags: ['comments'],
        summary: 'All comments, newest first',
        querystring: commentListQuery('newest'),
        response: { 200: CommentList, '4xx': ErrorResponse },
      },
    },
    async (request) => list({ kind: 'all' }, request.query),
  );

  app.get(
    '/questions/:id/comments',
    {
      config: { readCache: true },
      schema: {
        tags: ['comments'],
        summary: "A question's comments (not its answers'), oldest first",
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 500, description: 'Question id or slug' }),
        }),
        querystring: commentListQuery('oldest'),
        response: { 200: CommentList, '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const id = await questions.resolveId(request.params.id);
      if (id === undefined) throw new NotFoundError('Question not found');
      return list({ kind: 'question', id }, request.query);
    },
  );

  app.get(
    '/answers/:id/comments',
    {
      config: { readCache: true },
      schema: {
        tags: ['comments'],
        summary: "An answer's comments, oldest first",
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
        querystring: commentListQuery('oldest'),
        response: { 200: CommentList, '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await answers.exists(id))) throw new NotFoundError('Answer not found');
      return list({ kind: 'answer', id }, request.query);
    },
  );
};
