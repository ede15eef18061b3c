import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_CHANGES_LIMIT, readChanges } from '../../../shared/changes/feed.js';
import { FEED_TYPES } from '../../../shared/db/repositories/changes.js';
import { nameComponents } from '../../http/components.js';
import type { QaDeps } from '../deps.js';
import { ErrorResponse, success } from '../schemas.js';

export const Change = Type.Object({
  seq: Type.Integer({ description: 'Position in the feed: increasing in commit order' }),
  type: Type.Enum([...FEED_TYPES]),
  id: Type.Integer({ description: 'The id of the question, answer, comment or user' }),
  op: Type.Enum(['upsert', 'delete'], {
    description: 'upsert: created or changed (read it again); delete: gone',
  }),
  at: Type.String({ format: 'date-time', description: 'When the change committed (ISO 8601, UTC)' }),
});

export const ChangesPage = Type.Object({
  changes: Type.Array(Change),
  next_cursor: Type.String({ description: 'Pass as `since` to read the changes after this page' }),
  has_more: Type.Boolean({
    description:
      'More changes (of these types) were already committed after this page: read again at once with next_cursor. ' +
      'False once caught up; the feed never ends, so keep polling with next_cursor',
  }),
});

nameComponents({ Change, ChangesPage });

/** GET /changes: the change feed (shared/changes/feed.ts). */
export const changesRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  app.get(
    '/changes',
    {
      // In the read cache: every table whose rows the feed reports (questions, answers, comments, users) notifies at
      // commit, and a cached page, however old, is a consistent snapshot whose next_cursor holds only seqs it has
      // seen, so a client following it never misses a change (docs/qa-api.md, "Change feed"). On the primary only:
      // a cursor from the primary may be ahead of a lagging replica, which would refuse it as another database's.
      config: { readCache: true, readReplica: false },
      schema: {
        tags: ['changes'],
        summary: 'Follow changes to questions, answers, comments and users',
        description:
          'Every committed change, deletions included, in commit order. Start without `since`, then pass each ' +
          "answer's next_cursor as `since`. Changes are kept for QA_CHANGES_RETENTION_DAYS (default 30); an older " +
          'cursor is a 410.',
        querystring: Type.Object({
          since: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 200,
              pattern: '^[A-Za-z0-9_-]+$',
              description: 'The next_cursor of the previous answer',
            }),
          ),
          types: Type.Optional(
            Type.String({
              maxLength: 100,
              description: `Comma-separated: ${FEED_TYPES.join(', ')} (default: all)`,
            }),
          ),
          limit: Type.Integer({
            minimum: 1,
            maximum: MAX_CHANGES_LIMIT,
            default: 100,
            description: `Changes per answer (1-${MAX_CHANGES_LIMIT})`,
          }),
        }),
        response: { 200: success(ChangesPage), '4xx': ErrorResponse },
      },
    },
    async (request) => ({ success: true as const, data: await readChanges(deps.database, request.query) }),
  );
};
