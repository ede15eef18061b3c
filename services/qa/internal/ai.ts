import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AI_DEFAULT_TAG_LIMIT,
  AI_MAX_CONTENT_LENGTH,
  AI_MAX_TAG_LIMIT,
  AI_MAX_TITLE_LENGTH,
} from '../../../shared/ai/limits.js';
import { settingsRepository } from '../../../shared/db/repositories/settings.js';
import {
  AppError,
  ForbiddenError,
  ServiceUnavailableError,
  ValidationError,
} from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import { ErrorResponse } from '../schemas.js';
import { AiRequestBody, AiResponse } from './ai-request.js';

/**
 * POST /api/ai.php — spam_check, quality_check, suggest_tags, chat. The models live in the `ai` workers: this handler
 * checks the operator switch, validates, enqueues one `run` job and waits for its result until AI_DEADLINE_MS.
 *
 * Order of checks: a disabled feature answers 403 to every request, before the body is even read (for callers the
 * feature does not exist then); with AI on, a bad body is a 400. See docs/ai.md "The endpoint".
 */
export const aiRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const settings = settingsRepository(deps.database.db);
  const deadlineMs = deps.config.ai.deadlineMs;

  app.post(
    '/ai.php',
    {
      schema: {
        tags: ['internal'],
        summary: 'AI features: spam_check, quality_check, suggest_tags, chat',
        description:
          `Off until an operator sets \`ai_enabled\` (403 while off). JSON or form-encoded. \`content\`: 1–${AI_MAX_CONTENT_LENGTH} ` +
          `characters. \`title\` (quality_check, ≤ ${AI_MAX_TITLE_LENGTH}) and \`limit\` (suggest_tags, 1–${AI_MAX_TAG_LIMIT}, ` +
          `default ${AI_DEFAULT_TAG_LIMIT}) are optional. 503 when no worker answers within the deadline.`,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: AiRequestBody,
        response: { 200: AiResponse, '4xx': ErrorResponse, '5xx': ErrorResponse },
      },
      // Checked per request (one primary-key read) so the admin panel's switch takes effect at once.
      onRequest: async () => {
        if ((await settings.get('ai_enabled')) !== true) {
          throw new ForbiddenError('AI features are disabled on this site');
        }
      },
    },
    async (request) => {
      const { action, content, title, limit } = request.body;
      // The schema checks types and lengths; blank content is refused like empty content: no action can use it.
      if (content.trim() === '') throw new ValidationError('content must not be empty');
      const payload = {
        action,
        content,
        ...(action === 'quality_check' && title !== undefined ? { title } : {}),
        ...(action === 'suggest_tags' && limit !== undefined ? { limit } : {}),
        expiresAt: Date.now() + deadlineMs,
        requestId: request.id,
      };
      let result: Record<string, unknown>;
      try {
        result = (await deps.queues.enqueueAndWait('ai', 'run', payload, deadlineMs)) as Record<
          string,
          unknown
        >;
      } catch (err) {
        if (err instanceof AppError) throw err;
        // Redis unreachable, or the job failed after its retries (e.g. the database is down): transient for the caller.
        request.log.error({ err, action }, 'ai job failed');
        throw new ServiceUnavailableError('The AI service could not answer; try again later');
      }
      if (!result || 'skipped' in result)
        throw new ServiceUnavailableError(`The ai job did not finish within ${deadlineMs} ms`);
      return { success: true, ...result } as AiResponse;
    },
  );
};
