import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TAG_SORTS, tagsRepository } from '../../../shared/db/repositories/tags.js';
import { TOP_ANSWERER_PERIODS, tagDetailsRepository } from '../../../shared/db/repositories/tag-details.js';
import { COUNT_BOUND } from '../../../shared/db/repositories/windows.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { QaDeps } from '../deps.js';
import {
  Cursor,
  ErrorResponse,
  Limit,
  OneOf,
  Page,
  Pagination,
  RelatedTag,
  success,
  Tag,
  TagDetail,
  TopAnswerer,
} from '../schemas.js';

const TagKey = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 100, description: 'Tag slug' }) });

export const tagsRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const tags = tagsRepository(deps.database.db);
  const details = tagDetailsRepository(deps.database.db);

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

  const tagOf = async (slug: string) => {
    const tag = await details.find(slug);
    if (!tag) throw new NotFoundError('Tag not found');
    return tag;
  };

  app.get(
    '/tags/:slug',
    {
      config: { readCache: true },
      schema: {
        tags: ['tags'],
        summary: 'One tag with its description and counts',
        params: TagKey,
        response: { 200: success(TagDetail), '4xx': ErrorResponse },
      },
    },
    async (request) => ({ success: true as const, data: await tagOf(request.params.slug) }),
  );

  app.get(
    '/tags/:slug/related',
    {
      config: { readCache: true },
      schema: {
        tags: ['tags'],
        summary: 'Tags that share questions with this one',
        description:
          `Most shared questions first, then tag id; counted over the tag's ${COUNT_BOUND.toLocaleString('en')} ` +
          'newest questions (all of them for a smaller tag).',
        params: TagKey,
        querystring: Type.Object({ limit: Limit }),
        response: { 200: success(Type.Object({ related: Type.Array(RelatedTag) })), '4xx': ErrorResponse },
      },
    },
    async (request) => {
      const tag = await tagOf(request.params.slug);
      return {
        success: true as const,
        data: { related: await details.related(tag.id, request.query.limit) },
      };
    },
  );

  app.get(
    '/tags/:slug/top-answerers',
    {
      config: { readCache: true },
      schema: {
        tags: ['tags'],
        summary: 'Users by the score of their answers in the tag',
        description:
          'month: answers posted in the last 30 days; all_time: answers to the tag’s ' +
          `${COUNT_BOUND.toLocaleString('en')} newest questions (all of them for a smaller tag). ` +
          'Ties: answer count, then user id.',
        params: TagKey,
        querystring: Type.Object({ period: OneOf(TOP_ANSWERER_PERIODS, 'all_time'), limit: Limit }),
        response: {
          200: success(Type.Object({ top_answerers: Type.Array(TopAnswerer) })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const tag = await tagOf(request.params.slug);
      const { period, limit } = request.query;
      return {
        success: true as const,
        data: { top_answerers: await details.topAnswerers(tag.id, period, limit) },
      };
    },
  );
};
