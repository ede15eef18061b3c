import { Type } from 'typebox';
import { AI_MAX_CONTENT_LENGTH, AI_MAX_TAG_LIMIT, AI_MAX_TITLE_LENGTH } from '../ai/limits.js';
import { defineQueue, retrying, Skipped, Unread } from './define.js';

export const AI_ACTIONS = ['spam_check', 'quality_check', 'suggest_tags', 'chat'] as const;
export type AiAction = (typeof AI_ACTIONS)[number];

/** How often the tag index is rebuilt from PostgreSQL; a new tag is suggested at most this long after it appears. */
export const AI_TAG_INDEX_REBUILD_EVERY_MS = 15 * 60_000;

/**
 * `run` answers one ai.php request; the endpoint waits for its return value (enqueueAndWait). `rebuild-tag-index`
 * is scheduled, rebuilds the BM25 tag index from the questions and publishes it in Redis for every worker.
 */
export const aiQueue = defineQueue({
  name: 'ai',
  jobs: {
    run: {
      action: Type.Union([
        Type.Literal('spam_check'),
        Type.Literal('quality_check'),
        Type.Literal('suggest_tags'),
        Type.Literal('chat'),
      ]),
      content: Type.String({ minLength: 1, maxLength: AI_MAX_CONTENT_LENGTH }),
      title: Type.Optional(Type.String({ maxLength: AI_MAX_TITLE_LENGTH })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AI_MAX_TAG_LIMIT })),
      // Epoch ms after which nobody waits for the answer any more: a worker skips the job instead of computing it.
      expiresAt: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    'rebuild-tag-index': {},
  },
  // `run`'s answer for each action, as POST /api/ai.php returns it (less `success`), or skipped when expired.
  results: {
    run: Type.Union([
      Type.Object({ is_spam: Type.Boolean(), confidence: Type.Number() }),
      Type.Object({
        score: Type.Number(),
        issues: Type.Array(Type.Object({ code: Type.String(), message: Type.String() })),
      }),
      Type.Object({
        tags: Type.Array(Type.Object({ name: Type.String(), slug: Type.String(), score: Type.Number() })),
      }),
      Type.Object({
        reply: Type.String(),
        sources: Type.Array(
          Type.Object({
            type: Type.Union([Type.Literal('question'), Type.Literal('answer')]),
            id: Type.Integer(),
            question_id: Type.Integer(),
            title: Type.String(),
            url: Type.Optional(Type.String()),
            score: Type.Number(),
          }),
        ),
        generated_by: Type.Union([Type.Literal('local'), Type.Literal('provider')]),
      }),
      Skipped,
    ]),
    'rebuild-tag-index': Unread,
  },
  // run jobs carry user text: keep them briefly (the waiting request reads the result from the completion event).
  defaultJobOptions: {
    ...retrying(2, 500),
    removeOnComplete: { age: 60, count: 1000 },
    removeOnFail: { age: 24 * 3600, count: 1000 },
  },
  schedulers: () => [
    {
      id: 'ai-rebuild-tag-index',
      job: 'rebuild-tag-index',
      payload: {},
      repeat: { every: AI_TAG_INDEX_REBUILD_EVERY_MS },
    },
  ],
});
