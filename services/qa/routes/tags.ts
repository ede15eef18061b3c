import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TAG_SORTS, tagsRepository } from '../../../shared/db/repositories/tags.js';
import type { QaDeps } from '../deps.js';
import { Cursor, ErrorResponse, Limit, OneOf, Page, Pagination, success, Tag } from '../schemas.js';

export const tagsRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const tags = tagsRepository(deps.database.db);

  app.get(
    '/tags',
    {
      config: { readCache: true },
      schema: {
        tags: ['tags'],
        summary: 'List tags',
        description: 'popular (default): most questions first.',
        querystring: Type.Object({
          sort: OneOf(TAG_SORTS, 'popular'),
          page: Page,
          limit: Limit,
          cursor: Cursor,
        }),
        response: {
          200: success(Type.Object({ tags: Type.Array(Tag), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => ({ success: true as const, data: await tags.list(request.query) }),
  );
};
