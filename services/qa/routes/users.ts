import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { USER_SORTS, userProfilesRepository } from '../../../shared/db/repositories/user-profiles.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import { sendData } from '../../http/json-response.js';
import type { QaDeps } from '../deps.js';
import { idVector } from '../ids.js';
import {
  Cursor,
  ErrorResponse,
  IdsParam,
  Limit,
  OneOf,
  Page,
  Pagination,
  success,
  User,
  WindowQuery,
} from '../schemas.js';

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
          ...WindowQuery,
        }),
        response: {
          200: success(Type.Object({ users: Type.Array(User), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    // The rows come rendered as JSON by PostgreSQL and go out unchanged (services/http/json-response.ts).
    async (request, reply) => sendData(reply, await profiles.list(request.query)),
  );

  app.get(
    '/users/:id',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's public profile, or several users' by ids",
        description:
          'With several ids (`3;8;2`, at most 100): data.users in the order asked, unknown ids left out.',
        params: IdsParam('User'),
        response: {
          200: success(Type.Union([User, Type.Object({ users: Type.Array(User) })])),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const ids = idVector(request.params.id);
      if (ids) return { success: true as const, data: { users: await profiles.findMany(ids) } };
      // A single id past int4 can name no user: 404, like any other unknown id.
      const id = Number(request.params.id);
      if (!Number.isSafeInteger(id) || id < 1) throw new ValidationError('id must be an integer from 1');
      const user = await profiles.find(id);
      if (!user) throw new NotFoundError('User not found');
      return { success: true as const, data: user };
    },
  );
};
