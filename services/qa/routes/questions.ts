import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ANSWER_SORTS, answersRepository } from '../../../shared/db/repositories/answers.js';
import { MAX_TAGS, QUESTION_SORTS, questionsRepository } from '../../../shared/db/repositories/questions.js';
import { NotFoundError } from '../../../shared/errors.js';
import { viewCounter } from '../../../shared/qa/views.js';
import { sendData } from '../../http/json-response.js';
import type { QaDeps } from '../deps.js';
import { idVector, isIdVector } from '../ids.js';
import {
  Answer,
  Cursor,
  ErrorResponse,
  Limit,
  Id,
  OneOf,
  Page,
  Pagination,
  Question,
  QuestionDetail,
  success,
  WindowQuery,
} from '../schemas.js';
import { KEY_GROUPS, keyGroup } from '../../../shared/keyspace.js';

// An id (digits), a slug, or up to 100 ids separated by ";" (ids.ts); the router caps parameters at 1,100 characters.
const QuestionKey = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 1100,
    description: 'Question id or slug, or up to 100 ids separated by ";"',
  }),
});

const INCLUDE = /^(answers|comments)(,(answers|comments))*$/;

export const questionsRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const questions = questionsRepository(deps.database.db);
  const answers = answersRepository(deps.database.db);
  const views = viewCounter(deps.redis, keyGroup(deps.config, KEY_GROUPS.views));

  app.get(
    '/questions',
    {
      config: { readCache: true },
      schema: {
        tags: ['questions'],
        summary: 'List questions',
        description:
          'Paginated questions, newest first by default. Filters combine. A page past the end is an empty list ' +
          'with the pagination of the whole result. min/max bound the sort key (votes, views or creation date).',
        querystring: Type.Object({
          page: Page,
          limit: Limit,
          cursor: Cursor,
          sort: OneOf(QUESTION_SORTS, 'newest', 'unanswered: questions without answers, newest first'),
          tag: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 504,
              description: `Tag slug, or up to ${MAX_TAGS} separated by ";" (questions that have all of them)`,
            }),
          ),
          category: Type.Optional(Id('Category id')),
          ...WindowQuery,
        }),
        response: {
          200: success(Type.Object({ questions: Type.Array(Question), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    // The rows come rendered as JSON by PostgreSQL and go out unchanged (services/http/json-response.ts).
    async (request, reply) => sendData(reply, await questions.list(request.query)),
  );

  // One question is not in the read cache: every read counts a view (a cached answer would skip the handler).
  // A vector of ids counts none, so it is cached like every other public read. The view goes to Redis, so the read
  // itself may come from a replica.
  app.get(
    '/questions/:id',
    {
      config: {
        readCache: (request) => isIdVector((request.params as { id?: string }).id ?? ''),
        readReplica: true,
      },
      schema: {
        tags: ['questions'],
        summary: 'One question by id or slug, or several by ids',
        description:
          'With several ids (`12;15;19`, at most 100): data.questions in the order asked, unknown ids left out ' +
          '(no includes, no view counted). ' +
          'include=answers adds data.answers (sorted like GET /questions/{id}/answers by default); include=comments ' +
          "adds data.comments (the question's comments) and, with answers, each answer's comments. Counts a view.",
        params: QuestionKey,
        querystring: Type.Object({
          include: Type.Optional(
            Type.String({
              pattern: INCLUDE.source,
              maxLength: 100,
              description: 'Comma-separated: answers, comments',
            }),
          ),
        }),
        response: {
          200: success(Type.Union([QuestionDetail, Type.Object({ questions: Type.Array(Question) })])),
          '4xx': ErrorResponse,
        },
      },
    },
    // The question with its answers and comments is one statement whose JSON PostgreSQL renders (question-json.ts).
    async (request, reply) => {
      const ids = idVector(request.params.id);
      if (ids) return sendData(reply, { questions: await questions.findMany(ids) });
      const include = new Set(request.query.include?.split(',') ?? []);
      const question = await questions.detail(request.params.id, {
        answers: include.has('answers'),
        comments: include.has('comments'),
      });
      if (!question) throw new NotFoundError('Question not found');
      // A lost view is better than a failed read when Redis is away; the warning says so.
      await views
        .record(question.id)
        .catch((err: Error) => request.log.warn({ err: err.message }, 'view not counted'));
      return sendData(reply, question.json);
    },
  );

  app.get(
    '/questions/:id/answers',
    {
      config: { readCache: true },
      schema: {
        tags: ['questions'],
        summary: 'All answers of a question',
        description:
          'votes (default): the accepted answer first, then by votes, then oldest first. fromdate/todate keep the ' +
          "answers created within them; min/max bound the sort's key (votes, or the creation date for newest and " +
          "oldest); order=asc|desc is the sort's direction (the other one reads the whole order backwards).",
        params: QuestionKey,
        querystring: Type.Object({ sort: OneOf(ANSWER_SORTS, 'votes'), ...WindowQuery }),
        response: { 200: success(Type.Object({ answers: Type.Array(Answer) })), '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const { sort, ...window } = request.query;
      const id = await questions.resolveId(request.params.id);
      if (id === undefined) throw new NotFoundError('Question not found');
      return {
        success: true as const,
        data: { answers: await answers.listForQuestion(id, sort, window) },
      };
    },
  );
};
