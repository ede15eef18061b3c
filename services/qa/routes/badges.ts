import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { badgeAwardsRepository, SITE_BADGE_SORTS } from '../../../shared/db/repositories/badge-awards.js';
import { idsOf } from '../../../shared/db/repositories/id-set.js';
import type { QaDeps } from '../deps.js';
import {
  BadgeAward,
  Cursor,
  ErrorResponse,
  IdsParam,
  Limit,
  OneOf,
  Page,
  Pagination,
  SiteBadge,
  success,
} from '../schemas.js';
import { knownUsers } from './user-ids.js';

/** Badges: the awards of one user or several (`/users/{ids}/badges`), and the site's badges with their counts. */
export const badgeRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const db = deps.database.db;
  const awards = badgeAwardsRepository(db);
  const users = knownUsers(db);

  app.get(
    '/users/:id/badges',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "A user's badges, newest first, or several users' by ids",
        description:
          'Every badge the user earned, newest first (ties: award id). With several ids (`3;8;2`, at most 100): ' +
          'their awards merged, unknown ids left out. total_items is the sum of the users’ badge counts.',
        params: IdsParam('User'),
        querystring: Type.Object({ page: Page, limit: Limit, cursor: Cursor }),
        response: {
          200: success(Type.Object({ badges: Type.Array(BadgeAward), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const ids = await users.resolve(request.params.id);
      return { success: true as const, data: await awards.forUsers(idsOf(ids), request.query) };
    },
  );

  app.get(
    '/badges',
    {
      config: { readCache: true },
      schema: {
        tags: ['users'],
        summary: "The site's badges and how often each was awarded",
        description:
          'One entry per badge (name, class, tag flag). class (default): gold, then silver, then bronze, each by ' +
          'name; name: by name; awards: most awarded first.',
        querystring: Type.Object({
          sort: OneOf(SITE_BADGE_SORTS, 'class'),
          page: Page,
          limit: Limit,
          cursor: Cursor,
        }),
        response: {
          200: success(Type.Object({ badges: Type.Array(SiteBadge), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const { sort, ...page } = request.query;
      return { success: true as const, data: await awards.site(sort, page) };
    },
  );
};
