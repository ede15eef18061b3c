import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { questionsRepository } from '../../../../shared/db/repositories/questions.js';
import { NotFoundError } from '../../../../shared/errors.js';
import type { QaWrites } from '../../../../shared/qa/writes.js';
import type { QaDeps } from '../../deps.js';
import { ErrorResponse, Question, success } from '../../schemas.js';
import { actorOf, WRITE_SECURITY } from './actor.js';
import { NewQuestion, QuestionEdit, QuestionKey } from './schemas.js';

export const questionWriteRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps; writes: QaWrites }> = async (
  app,
  { deps, writes },
) => {
  const questions = questionsRepository(deps.database.db);
  const read = async (id: number) => (await questions.find(String(id)))!;

  app.post(
    '/questions',
    {
      schema: {
        tags: ['writes'],
        summary: 'Ask a question',
        security: WRITE_SECURITY,
        body: NewQuestion,
        response: { 201: success(Question), '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      const id = await writes.askQuestion(actorOf(request), request.body);
      const question = await read(id);
      return reply
        .code(201)
        .header('location', `/api/questions/${question.slug}`)
        .send({ success: true as const, data: question });
    },
  );

  app.patch(
    '/questions/:id',
    {
      schema: {
        tags: ['writes'],
        summary: 'Edit your question (title, content, tags, category); the slug never changes',
        security: WRITE_SECURITY,
        params: QuestionKey,
        body: QuestionEdit,
        response: { 200: success(Question), '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const id = await questions.resolveId(request.params.id);
      if (id === undefined) throw new NotFoundError('Question not found');
      await writes.editQuestion(actorOf(request), id, request.body);
      return { success: true as const, data: await read(id) };
    },
  );
};
