import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { pollsRepository, type PollRecord } from '../../../shared/db/repositories/polls.js';
import { NotFoundError } from '../../../shared/errors.js';
import { closePoll, createPoll } from '../../../shared/polls/creation.js';
import { pollResults } from '../../../shared/polls/results.js';
import { isClosed, POLL_LIMITS } from '../../../shared/polls/rules.js';
import { voterId } from '../../../shared/polls/voter.js';
import { loadAppSecret } from '../../../shared/secrets.js';
import { requireScope } from '../../http/auth.js';
import { MAX_INT4 } from '../../../shared/db/int4.js';
import type { QaDeps } from '../deps.js';
import { ErrorResponse, success } from '../schemas.js';

/** The spec's Poll result; shared with POST /api/poll-vote.php. */
export const PollResult = Type.Object({
  total_votes: Type.Integer(),
  options: Type.Array(
    Type.Object({
      id: Type.Integer(),
      text: Type.String(),
      votes: Type.Integer(),
      percentage: Type.Number({
        description: 'One decimal; they sum to exactly 100 when there are votes, else all 0',
      }),
    }),
  ),
});

const Timestamp = Type.String({ format: 'date-time' });
const Id = Type.Integer({ minimum: 1, maximum: MAX_INT4 });

const Poll = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  question_id: Type.Union([Type.Integer(), Type.Null()]),
  author_id: Type.Union([Type.Integer(), Type.Null()]),
  allow_change: Type.Boolean(),
  is_closed: Type.Boolean(),
  closed_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When the poll closed or will close (a deadline)',
  }),
  created_at: Timestamp,
  tallied_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When the polls worker last stored the counts',
  }),
  results: PollResult,
  your_vote: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The option the caller voted for, if any',
  }),
});

const NewPollBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: POLL_LIMITS.titleMax }),
  options: Type.Array(Type.String({ minLength: 1, maxLength: POLL_LIMITS.optionTextMax }), {
    minItems: POLL_LIMITS.optionsMin,
    maxItems: POLL_LIMITS.optionsMax,
  }),
  question_id: Type.Optional(Id),
  allow_change: Type.Optional(Type.Boolean({ default: false })),
  closes_at: Type.Optional(Timestamp),
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function present(poll: PollRecord, yourVote: number | null) {
  return {
    id: poll.id,
    title: poll.title,
    question_id: poll.questionId,
    author_id: poll.authorId,
    allow_change: poll.allowChange,
    is_closed: isClosed(poll.closedAt),
    closed_at: iso(poll.closedAt),
    created_at: poll.createdAt.toISOString(),
    tallied_at: iso(poll.talliedAt),
    // The stored tally: the polls worker brings it up to date within moments of the last vote.
    results: pollResults(poll.options, (id) => poll.options.find((o) => o.id === id)?.votes ?? 0),
    your_vote: yourVote,
  };
}

const creatorOf = (request: FastifyRequest) => ({
  userId: request.principal!.userId,
  admin: request.principal!.scopes.includes('admin'),
});

/** Polls: create (a key with qa:write; attach to one's own question), read with the stored tally, close. */
export const pollsRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const polls = pollsRepository(deps.database.db);
  const secret = await loadAppSecret(deps.config, deps.database);
  const PollResponse = success(Type.Object({ poll: Poll }));

  app.post(
    '/polls',
    {
      preHandler: requireScope('qa:write'),
      schema: {
        tags: ['polls'],
        summary: 'Create a poll, optionally attached to a question of yours',
        security: [{ bearer: [] }],
        body: NewPollBody,
        response: { 201: PollResponse, '4xx': ErrorResponse },
      },
    },
    async (request, reply) => {
      const { title, options, question_id, allow_change, closes_at } = request.body;
      const poll = await createPoll(
        deps.database.db,
        {
          title,
          options,
          questionId: question_id,
          allowChange: allow_change,
          closesAt: closes_at ? new Date(closes_at) : null,
        },
        creatorOf(request),
      );
      return reply.status(201).send({ success: true as const, data: { poll: present(poll, null) } });
    },
  );

  app.get(
    '/polls/:id',
    {
      schema: {
        tags: ['polls'],
        summary: 'A poll with its stored tally',
        params: Type.Object({ id: Id }),
        response: { 200: PollResponse, '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const poll = await polls.find(request.params.id);
      if (!poll) throw new NotFoundError(`Poll ${request.params.id} not found`);
      const yourVote = await polls.voteOf(
        poll.id,
        voterId(request.principal?.userId ?? null, request.ip, secret, deps.config.rateLimits.ipv6Prefix),
      );
      return { success: true as const, data: { poll: present(poll, yourVote) } };
    },
  );

  app.post(
    '/polls/:id/close',
    {
      preHandler: requireScope('qa:write'),
      schema: {
        tags: ['polls'],
        summary: 'Close a poll of yours now; later votes are refused with 403',
        security: [{ bearer: [] }],
        params: Type.Object({ id: Id }),
        response: { 200: PollResponse, '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const poll = await closePoll(deps.database.db, request.params.id, creatorOf(request));
      return { success: true as const, data: { poll: present(poll, null) } };
    },
  );
};
