import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { postWritesRepository } from '../../../../shared/db/repositories/post-writes.js';
import { questionsRepository } from '../../../../shared/db/repositories/questions.js';
import { NotFoundError } from '../../../../shared/errors.js';
import type { QaWrites } from '../../../../shared/qa/writes.js';
import type { QaDeps } from '../../deps.js';
import { Answer, ErrorResponse, success } from '../../schemas.js';
import { actorOf, postId, WRITE_SECURITY } from './actor.js';
import { AcceptResult, AnswerKey, PostText, QuestionKey } from './schemas.js';

export const answerWriteRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps; writes: QaWrites }> = async (
  app,
  { deps, writes },
) => {
  const questions = questionsRepository(deps.database.db);
  const posts = postWritesRepository(deps.database.db);
  const answerIdOf = (raw: string) => {
    const id = postId(raw);
    if (id === undefined) throw new NotFoundError('Answer not found');
    return id;
  };

  app.post(
    '/questions/:id/answers',
    {
      schema: {
        tags: ['writes'],
        summary: 'Answer a question',
        security: WRITE_SECURITY,
        params: QuestionKey,
        body: PostText,
        response: { 201: success(Answer), '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      const questionId = await questions.resolveId(request.params.id);
      if (questionId === undefined) throw new NotFoundError('Question not found');
      const id = await writes.answer(actorOf(request), questionId, request.body.content);
      return reply.code(201).send({ success: true as const, data: (await posts.answerView(id))! });
    },
  );

  app.patch(
    '/answers/:id',
    {
      schema: {
        tags: ['writes'],
        summary: 'Edit your answer',
        security: WRITE_SECURITY,
        params: AnswerKey,
        body: PostText,
        response: { 200: success(Answer), '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const id = answerIdOf(request.params.id);
      await writes.editAnswer(actorOf(request), id, request.body.content);
      return { success: true as const, data: (await posts.answerView(id))! };
    },
  );

  const accept = (accepted: boolean) => async (request: FastifyRequest) => {
    const result = await writes.accept(
      actorOf(request),
      answerIdOf((request.params as { id: string }).id),
      accepted,
    );
    return { success: true as const, data: result };
  };
  const acceptSchema = (summary: string) => ({
    tags: ['writes'],
    summary,
    security: WRITE_SECURITY,
    params: AnswerKey,
    response: { 200: success(AcceptResult), '4xx': ErrorResponse },
  });

  app.post(
    '/answers/:id/accept',
    { schema: acceptSchema('Accept an answer to your question (replaces the accepted one)') },
    accept(true),
  );
  app.delete(
    '/answers/:id/accept',
    { schema: acceptSchema('Withdraw the acceptance of an answer to your question') },
    accept(false),
  );
};
