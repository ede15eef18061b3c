import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SEARCH_TYPES } from '../../../shared/db/repositories/search.js';
import { searchService } from '../../../shared/qa/search.js';
import type { QaDeps } from '../deps.js';
import {
  ErrorResponse,
  Limit,
  OneOf,
  Page,
  Pagination,
  SearchResult,
  success,
  WindowQuery,
} from '../schemas.js';

export const MAX_QUERY_LENGTH = 200;

export const searchRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const search = searchService(deps.database.db);

  app.get(
    '/search',
    {
      config: { readCache: true },
      schema: {
        tags: ['search'],
        summary: 'Search questions, answers and users',
        description:
          'Full-text search (web search syntax: "quoted phrase", -excluded, or) of questions (title > tags > body) ' +
          'and answers, and partial matching of user names. type=all merges the kinds by score. A query of stop ' +
          'words or punctuation only finds nothing. fromdate/todate keep the questions, answers and users created ' +
          'within them (before the candidates are picked); order=desc (default) is the most relevant first, asc the ' +
          'reverse (ties by kind, then id, reversed too). Each kind ranks at most its 200 most recent matches: when ' +
          'one reaches that bound, pagination.total_bounded is true and total_items is a lower bound.',
        querystring: Type.Object({
          q: Type.String({
            minLength: 1,
            maxLength: MAX_QUERY_LENGTH,
            pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$',
            description: 'Search text',
          }),
          type: OneOf(SEARCH_TYPES, 'all'),
          page: Page,
          limit: Limit,
          fromdate: WindowQuery.fromdate,
          todate: WindowQuery.todate,
          order: WindowQuery.order,
        }),
        response: {
          200: success(Type.Object({ results: Type.Array(SearchResult), pagination: Pagination })),
          '4xx': ErrorResponse,
        },
      },
    },
    async (request) => {
      const { q, ...rest } = request.query;
      return { success: true as const, data: await search.search({ ...rest, q: q.trim() }) };
    },
  );
};
