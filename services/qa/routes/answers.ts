import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerListsRepository } from '../../../shared/db/repositories/answer-lists.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import { idList } from '../ids.js';
import { AnswerOnQuestion, ErrorResponse, IdsParam, success } from '../schemas.js';

/** GET /answers/{ids}: one answer, or several in the order asked (PATCH /answers/{id} is in writes/). */
export const answersRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const answers = answerListsRepository(deps.database.db);

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
