import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerListsRepository } from '../../../shared/db/repositories/answer-lists.js';
import { isInt4Id } from '../../../shared/db/int4.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import { idVector } from '../ids.js';
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
      const ids = idVector(request.params.id);
      if (ids) return { success: true as const, data: { answers: await answers.byIds(ids) } };
      const id = Number(request.params.id);
      const [answer] = isInt4Id(id) ? await answers.byIds([id]) : [];
      if (!answer) throw new NotFoundError('Answer not found');
      return { success: true as const, data: answer };
    },
  );
};
