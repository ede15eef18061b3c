import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ANSWER_SORTS, answerListsRepository } from '../../../shared/db/repositories/answer-lists.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import { idList } from '../ids.js';
import {
  AnswerOnQuestion,
  Cursor,
  ErrorResponse,
  IdsParam,
  Limit,
  OneOf,
  Page,
  Pagination,
  success,
  WindowQuery,
} from '../schemas.js';

/** The query of an answer list (the site's, a user's): sort, pagination and windows. */
export const AnswerListQuery = Type.Object({
  sort: OneOf(ANSWER_SORTS, 'newest'),
  page: Page,
  limit: Limit,
  cursor: Cursor,
  ...WindowQuery,
});

export const AnswerList = success(
  Type.Object({ answers: Type.Array(AnswerOnQuestion), pagination: Pagination }),
);

/**
 * GET /answers: the site's answers (Stack Exchange's /answers, with its windows); GET /answers/{ids}: one answer, or
 * several in the order asked (PATCH /answers/{id} is in writes/).
 */
export const answersRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const answers = answerListsRepository(deps.database.db);

  app.get(
    '/answers',
    {
      config: { readCache: true },
      schema: {
        tags: ['answers'],
        summary: 'All answers, newest first',
        description:
          'newest (default) and oldest by creation; votes: best voted first. fromdate/todate keep the answers ' +
          "created within them, min/max bound the sort's key (votes, or the creation date), order=asc|desc is the " +
          "sort's direction.",
        querystring: AnswerListQuery,
        response: { 200: AnswerList, '4xx': ErrorResponse },
      },
    },
    async (request) => ({ success: true as const, data: await answers.forSite(request.query) }),
  );

  app.get(
    '/answers/:id',
    {
      config: { readCache: true },
      schema: {
        tags: ['answers'],
        summary: 'One answer, or several by ids',
        description:
          'The answer with the question it answers. With several ids (`4;9;7`, at most 100): data.answers in the ' +
          'order asked, unknown ids left out.',
        params: IdsParam('Answer'),
        response: {
          200: success(
            Type.Union([AnswerOnQuestion, Type.Object({ answers: Type.Array(AnswerOnQuestion) })]),
          ),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      // A single id of 0 is a 400, one past int4 a 404: as /questions/{id} and /users/{id} answer them.
      const { ids, single, exists } = idList(request.params.id);
      if (!single) return { success: true as const, data: { answers: await answers.byIds(ids) } };
      const [answer] = exists ? await answers.byIds(ids) : [];
      if (!answer) throw new NotFoundError('Answer not found');
      return { success: true as const, data: answer };
    },
  );
};
