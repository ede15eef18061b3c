import { Type, type Static } from '@fastify/type-provider-typebox';
import { AI_MAX_CONTENT_LENGTH, AI_MAX_TAG_LIMIT, AI_MAX_TITLE_LENGTH } from '../../../shared/ai/limits.js';
import { ValidationError } from '../../../shared/errors.js';
import { AI_ACTIONS, type AiAction } from '../../../shared/queues/ai.js';

/** Request and response schemas of POST /api/ai.php, and the validation the route runs instead of Ajv's. */

const LIMIT_PATTERN = /^(?:[1-9]|1[0-9]|20)$/;

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
      Type.Union(
        [
          Type.Integer({ minimum: 1, maximum: AI_MAX_TAG_LIMIT }),
          Type.String({ pattern: LIMIT_PATTERN.source }),
        ],
        {
          description: `suggest_tags only: how many tags at most (1–${AI_MAX_TAG_LIMIT}); a form sends it as a string`,
        },
      ),
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

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(message: string): { error: ValidationError } {
  return { error: new ValidationError(message) };
}

/**
 * Validates a JSON or form-encoded body without coercing types: `content: 123` or a repeated form field (an array) is
 * a 400, not silently turned into a string. Blank content is refused like empty content: no action can use it.
 */
export function parseAiRequest(body: unknown): { value: AiRequest } | { error: ValidationError } {
  if (!isObject(body)) return fail('Send a JSON object or a form with the fields action and content');
  const { action, content, title, limit } = body;
  if (action === undefined) return fail(`action is required: one of ${AI_ACTIONS.join(', ')}`);
  if (typeof action !== 'string' || !(AI_ACTIONS as readonly string[]).includes(action)) {
    return fail(`Unknown action ${JSON.stringify(action)}: expected one of ${AI_ACTIONS.join(', ')}`);
  }
  if (content === undefined) return fail('content is required');
  if (typeof content !== 'string') return fail('content must be a string');
  if (content.trim() === '') return fail('content must not be empty');
  if (content.length > AI_MAX_CONTENT_LENGTH) {
    return fail(
      `content is ${content.length} characters long; at most ${AI_MAX_CONTENT_LENGTH} are accepted`,
    );
  }
  if (title !== undefined && typeof title !== 'string') return fail('title must be a string');
  if (typeof title === 'string' && title.length > AI_MAX_TITLE_LENGTH) {
    return fail(`title is ${title.length} characters long; at most ${AI_MAX_TITLE_LENGTH} are accepted`);
  }
  let tagLimit: number | undefined;
  if (limit !== undefined) {
    const ok =
      typeof limit === 'number'
        ? Number.isInteger(limit) && limit >= 1 && limit <= AI_MAX_TAG_LIMIT
        : typeof limit === 'string' && LIMIT_PATTERN.test(limit);
    if (!ok) return fail(`limit must be an integer from 1 to ${AI_MAX_TAG_LIMIT}`);
    tagLimit = Number(limit);
  }
  return {
    value: {
      action: action as AiAction,
      content,
      ...(typeof title === 'string' ? { title } : {}),
      ...(tagLimit !== undefined ? { limit: tagLimit } : {}),
    },
  };
}
