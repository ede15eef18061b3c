import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { questionsRepository } from '../../../../shared/db/repositories/questions.js';
import { NotFoundError } from '../../../../shared/errors.js';
import type { PostKind, VoteValue } from '../../../../shared/qa/reputation.js';
import type { QaWrites } from '../../../../shared/qa/writes.js';
import type { QaDeps } from '../../deps.js';
import { ErrorResponse, success } from '../../schemas.js';
import { actorOf, postId, WRITE_SECURITY } from './actor.js';
import { AnswerKey, QuestionKey, VoteBody, VoteResult } from './schemas.js';

/** PUT …/vote {value} sets the caller's vote (idempotent), DELETE …/vote removes it; POST with value 0 also removes. */
export const voteWriteRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps; writes: QaWrites }> = async (
  app,
  { deps, writes },
) => {
  const questions = questionsRepository(deps.database.db);

  const target = async (kind: PostKind, raw: string): Promise<number> => {
    const id = kind === 'question' ? await questions.resolveId(raw) : postId(raw);
    if (id === undefined)
      throw new NotFoundError(kind === 'question' ? 'Question not found' : 'Answer not found');
    return id;
  };

  for (const kind of ['question', 'answer'] as const) {
    const url = `/${kind}s/:id/vote`;
    const params = kind === 'question' ? QuestionKey : AnswerKey;
    const base = {
      tags: ['writes'],
      security: WRITE_SECURITY,
      params,
      response: { 200: success(VoteResult), '4xx': ErrorResponse },
    };
    const handler = (value: (request: FastifyRequest) => VoteValue) => async (request: FastifyRequest) => {
      const id = await target(kind, (request.params as { id: string }).id);
      return { success: true as const, data: await writes.vote(actorOf(request), kind, id, value(request)) };
    };
    const fromBody = (request: FastifyRequest) => (request.body as { value: VoteValue }).value;

    app.put(
      url,
      {
        schema: {
          ...base,
          summary: `Vote on ${kind === 'question' ? 'a question' : 'an answer'}`,
          body: VoteBody,
        },
      },
      handler(fromBody),
    );
    app.post(url, { schema: { ...base, summary: 'Same as PUT', body: VoteBody } }, handler(fromBody));
    app.delete(
      url,
      { schema: { ...base, summary: 'Remove your vote' } },
      handler(() => 0),
    );
  }
};
