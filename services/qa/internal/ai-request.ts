import { Type, type Static } from '@fastify/type-provider-typebox';
import { AI_MAX_CONTENT_LENGTH, AI_MAX_TAG_LIMIT, AI_MAX_TITLE_LENGTH } from '../../../shared/ai/limits.js';

/** Request and response schemas of POST /api/ai.php. A form's fields are coerced like a query string's. */

export const AiRequestBody = Type.Object(
  {
    action: Type.Union(
      [
        Type.Literal('spam_check'),
        Type.Literal('quality_check'),
        Type.Literal('suggest_tags'),
        Type.Literal('chat'),
      ],
      { description: 'What to do with content' },
    ),
    content: Type.String({
      minLength: 1,
      maxLength: AI_MAX_CONTENT_LENGTH,
      description: 'The post to check, or the chat message. Not empty or blank.',
    }),
    title: Type.Optional(
      Type.String({ maxLength: AI_MAX_TITLE_LENGTH, description: 'quality_check only: the post title' }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: AI_MAX_TAG_LIMIT,
        description: `suggest_tags only: how many tags at most (1–${AI_MAX_TAG_LIMIT})`,
      }),
    ),
  },
  { additionalProperties: true, description: 'Other fields (a form token, …) are ignored.' },
);
export type AiRequest = Static<typeof AiRequestBody>;

const Issue = Type.Object({ code: Type.String(), message: Type.String() });
const Tag = Type.Object({
  name: Type.String(),
  slug: Type.String(),
  score: Type.Number({ minimum: 0, maximum: 1 }),
});
const Source = Type.Object({
  type: Type.Union([Type.Literal('question'), Type.Literal('answer')]),
  id: Type.Integer({ description: 'The answer id for an answer, the question id for a question' }),
  question_id: Type.Integer(),
  title: Type.String(),
  url: Type.Optional(Type.String()),
  score: Type.Number({ description: 'Relevance relative to the best source (1)' }),
});

export const AiResponse = Type.Union([
  Type.Object({
    success: Type.Literal(true),
    is_spam: Type.Boolean(),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  }),
  Type.Object({
    success: Type.Literal(true),
    score: Type.Integer({ minimum: 0, maximum: 100 }),
    issues: Type.Array(Issue),
  }),
  Type.Object({ success: Type.Literal(true), tags: Type.Array(Tag) }),
  Type.Object({
    success: Type.Literal(true),
    reply: Type.String(),
    sources: Type.Array(Source),
    generated_by: Type.Union([Type.Literal('local'), Type.Literal('provider')]),
  }),
]);
export type AiResponse = Static<typeof AiResponse>;
