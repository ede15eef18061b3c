import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { categoriesRepository } from '../../../shared/db/repositories/categories.js';
import type { QaDeps } from '../deps.js';
import { Category, ErrorResponse, success } from '../schemas.js';

export const categoriesRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const categories = categoriesRepository(deps.database.db);

  app.get(
    '/categories',
    {
      config: { readCache: true },
      schema: {
        tags: ['categories'],
        summary: 'All categories',
        response: { 200: success(Type.Object({ categories: Type.Array(Category) })), '4xx': ErrorResponse },
      },
    },
    async () => ({ success: true as const, data: { categories: await categories.list() } }),
  );
};
