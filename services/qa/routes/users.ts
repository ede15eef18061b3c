import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { USER_SORTS, userProfilesRepository } from '../../../shared/db/repositories/user-profiles.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import { Cursor, ErrorResponse, Limit, OneOf, Page, Pagination, success, User } from '../schemas.js';

export const usersRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const profiles = userProfilesRepository(deps.database.db);

  app.get(
    '/users',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: 'List users',
        description:
          'Each item is the public profile (the User of GET /users/{id}). name sorts by display name.',
        querystring: Type.Object({
          sort: OneOf(USER_SORTS, 'reputation'),
          page: Page,
          limit: Limit,
          cursor: Cursor,
        }),
        response: {
          200: success(Type.Object({ users: Type.Array(User), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => ({ success: true as const, data: await profiles.list(request.query) }),
  );

  app.get(
    '/users/:id',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's public profile",
        // Ids past int4 can name no user: 404, like any other unknown id.
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
        response: { 200: success(User), '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const user = await profiles.find(request.params.id);
      if (!user) throw new NotFoundError('User not found');
      return { success: true as const, data: user };
    },
  );
};
