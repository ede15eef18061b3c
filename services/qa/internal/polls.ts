import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { pollVoting } from '../../../shared/polls/voting.js';
import { voterId } from '../../../shared/polls/voter.js';
import { loadAppSecret } from '../../../shared/secrets.js';
import { MAX_INT4 } from '../../../shared/db/int4.js';
import type { QaDeps } from '../deps.js';
import { ErrorResponse } from '../schemas.js';
import { PollResult } from '../routes/polls.js';

// Ids are PostgreSQL integers: anything larger cannot exist, and must be a 400/404, never a database error.
const Id = Type.Integer({ minimum: 1, maximum: MAX_INT4 });

/**
 * POST /api/poll-vote.php {poll_id, option_id}, as JSON (integers) or a form (digits; see services/http/validation.ts). The voter is the key's user when a Bearer key
 * is sent, otherwise the client (see shared/polls/voter.ts).
 */
export const pollVoteRoute: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const voting = pollVoting(deps);
  const secret = await loadAppSecret(deps.config, deps.database);

  app.post(
    '/poll-vote.php',
    {
      schema: {
        tags: ['internal'],
        summary: 'Vote for a poll option',
        description:
          'One vote per voter and poll: the API key’s user, else the client. A second vote is a 409 unless the poll allows changing a vote. ' +
          'The results are counted at the moment of the answer and include this vote.',
        body: Type.Object({ poll_id: Id, option_id: Id }),
        response: {
          200: Type.Object({ success: Type.Literal(true), results: PollResult }),
          '4xx': ErrorResponse,
          '5xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const voter = voterId(
        request.principal?.userId ?? null,
        request.ip,
        secret,
        deps.config.rateLimits.ipv6Prefix,
      );
      const results = await voting.vote({
        pollId: request.body.poll_id,
        optionId: request.body.option_id,
        voter,
        requestId: request.id,
      });
      return { success: true as const, results };
    },
  );
};
