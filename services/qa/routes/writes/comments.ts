import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { postWritesRepository } from '../../../../shared/db/repositories/post-writes.js';
import { questionsRepository } from '../../../../shared/db/repositories/questions.js';
import { NotFoundError } from '../../../../shared/errors.js';
import type { QaWrites } from '../../../../shared/qa/writes.js';
import type { QaDeps } from '../../deps.js';
import { Comment, ErrorResponse, success } from '../../schemas.js';
import { actorOf, postId, WRITE_SECURITY } from './actor.js';
import { AnswerKey, CommentText, QuestionKey } from './schemas.js';

export const commentWriteRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps; writes: QaWrites }> = async (
  app,
  { deps, writes },
) => {
  const questions = questionsRepository(deps.database.db);
  const posts = postWritesRepository(deps.database.db);
  const schema = (summary: string, params: typeof QuestionKey | typeof AnswerKey) => ({
    tags: ['writes'],
    summary,
    security: WRITE_SECURITY,
    params,
    body: CommentText,
    response: { 201: success(Comment), '4xx': ErrorResponse },
  });

  app.post(
    '/questions/:id/comments',
    { schema: schema('Comment on a question', QuestionKey) },
    async (request, reply) => {
      const id = await questions.resolveId(request.params.id);
      if (id === undefined) throw new NotFoundError('Question not found');
      const commentId = await writes.comment(
        actorOf(request),
        { kind: 'question', id },
        request.body.content,
      );
      return reply.code(201).send({ success: true as const, data: (await posts.commentView(commentId))! });
    },
  );

  app.post(
    '/answers/:id/comments',
    { schema: schema('Comment on an answer', AnswerKey) },
    async (request, reply) => {
      const id = postId(request.params.id);
      if (id === undefined) throw new NotFoundError('Answer not found');
      const commentId = await writes.comment(actorOf(request), { kind: 'answer', id }, request.body.content);
      return reply.code(201).send({ success: true as const, data: (await posts.commentView(commentId))! });
    },
  );
};
