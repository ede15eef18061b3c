import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { postLinksRepository } from '../../../shared/db/repositories/post-links.js';
import { questionsRepository } from '../../../shared/db/repositories/questions.js';
import { relatedQuestionsRepository } from '../../../shared/db/repositories/related-questions.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import { nameComponents } from '../../http/components.js';
import type { QaDeps } from '../deps.js';
import { Cursor, ErrorResponse, Limit, Page, Pagination, success } from '../schemas.js';

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });

const QuestionSummaryFields = {
  id: Type.Integer(),
  title: Type.String(),
  slug: Type.String(),
  votes: Type.Integer(),
  answers_count: Type.Integer(),
  has_accepted: Type.Boolean(),
  tags: Type.Array(Type.String(), { description: 'Tag names' }),
  created_at: Timestamp,
};

export const RelatedQuestion = Type.Object({
  ...QuestionSummaryFields,
  score: Type.Number({ description: 'Relevance, higher first; comparable within one answer only' }),
});

export const LinkedQuestion = Type.Object({
  ...QuestionSummaryFields,
  direction: Type.Enum(['outgoing', 'incoming', 'both'], {
    description: 'outgoing: this question links to it; incoming: it links to this question',
  }),
  is_duplicate: Type.Boolean({
    description:
      'A duplicate link: outgoing, this question is a duplicate of it; incoming, it is a duplicate of this one',
  }),
});

nameComponents({ RelatedQuestion, LinkedQuestion });

const MAX_RELATED = 30;
const MAX_SIMILAR_TAGS = 5;
const RelatedLimit = Type.Integer({
  minimum: 1,
  maximum: MAX_RELATED,
  default: 10,
  description: `Questions to return (1-${MAX_RELATED})`,
});
const QuestionKey = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'Question id or slug' }),
});

/** GET /questions/{id}/related, /questions/{id}/linked and /similar (issue 19, item 4). */
export const relatedRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const db = deps.database.db;
  const questions = questionsRepository(db);
  const related = relatedQuestionsRepository(db);
  const links = postLinksRepository(db);
  const questionId = async (key: string) => {
    const id = await questions.resolveId(key);
    if (id === undefined) throw new NotFoundError('Question not found');
    return id;
  };

  app.get(
    '/questions/:id/related',
    {
      config: { readCache: true },
      schema: {
        tags: ['questions'],
        summary: 'Questions like this one',
        description:
          'Full-text similarity of title and body (the start of it), each shared tag weighing 1.5×; best first, ' +
          'ties by id descending.',
        params: QuestionKey,
        querystring: Type.Object({ limit: RelatedLimit }),
        response: {
          200: success(Type.Object({ questions: Type.Array(RelatedQuestion) })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const id = await questionId(request.params.id);
      const found = await related.related(id, request.query.limit);
      if (!found) throw new NotFoundError('Question not found');
      return { success: true as const, data: { questions: found } };
    },
  );

  app.get(
    '/questions/:id/linked',
    {
      config: { readCache: true },
      schema: {
        tags: ['questions'],
        summary: 'Questions that link to this one or that it links to',
        description:
          "Links found in the question's and its answers' bodies, and a Stack Exchange dump's PostLinks.xml " +
          '(duplicates marked). Duplicates first, then newest id first.',
        params: QuestionKey,
        querystring: Type.Object({ page: Page, limit: Limit, cursor: Cursor }),
        response: {
          200: success(Type.Object({ questions: Type.Array(LinkedQuestion), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const id = await questionId(request.params.id);
      return { success: true as const, data: await links.linked(id, request.query) };
    },
  );

  app.get(
    '/similar',
    {
      config: { readCache: true },
      schema: {
        tags: ['questions'],
        summary: 'Questions similar to a title being typed (for an "ask a question" form)',
        description:
          'Full-text and trigram similarity to the title; questions with the given tags weigh 1.5× per tag. ' +
          'A title of stop words only finds nothing.',
        querystring: Type.Object({
          title: Type.String({
            minLength: 1,
            maxLength: 200,
            pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$',
            description: 'The title typed so far',
          }),
          tag: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 200,
              description: `Tag slugs separated by ";" (at most ${MAX_SIMILAR_TAGS}): a boost, not a filter`,
            }),
          ),
          limit: RelatedLimit,
        }),
        response: {
          200: success(Type.Object({ questions: Type.Array(RelatedQuestion) })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const { title, tag, limit } = request.query;
      const tags = tag === undefined ? [] : [...new Set(tag.split(';').map((t) => t.trim().toLowerCase()))];
      if (tags.some((t) => t.length === 0) || tags.length > MAX_SIMILAR_TAGS)
        throw new ValidationError(`tag: 1 to ${MAX_SIMILAR_TAGS} tag slugs separated by ";"`);
      return {
        success: true as const,
        data: { questions: await related.similar(title.trim(), tags, limit) },
      };
    },
  );
};
