import type { Db } from '../db/client.js';
import {
  searchRepository,
  type AnswerHit,
  type QuestionHit,
  type SearchPagination,
  type SearchType,
  type SearchWindow,
  type UserHit,
} from '../db/repositories/search.js';
import type { PageParams } from '../db/repositories/pagination.js';
import { excerpter } from './excerpt.js';
import { couldBeName } from './name-query.js';

/** A result as the API answers it: a post's text replaced by its excerpt, safe HTML. */
type Excerpted<T> = Omit<T, 'text'> & { excerpt: string };
export type SearchResult = Excerpted<QuestionHit> | Excerpted<AnswerHit> | UserHit;

/**
 * Search as the API answers it: the repository finds and ranks; here the rules of the domain apply: user names are
 * searched by `type=all` only for text that could be a name, and excerpts are cut around the matched words as
 * safe HTML with only our marks.
 */
export function searchService(db: Db) {
  const repository = searchRepository(db);
  return {
    async search(
      params: PageParams & SearchWindow & { q: string; type: SearchType },
    ): Promise<{ results: SearchResult[]; pagination: SearchPagination }> {
      const { results, lexemes, pagination } = await repository.search({
        ...params,
        names: couldBeName(params.q),
      });
      const excerptOf = excerpter(lexemes, params.q);
      return {
        results: results.map((hit) => {
          if (hit.type === 'user') return hit;
          const { text, ...rest } = hit;
          return { ...rest, excerpt: excerptOf(text) };
        }),
        pagination,
      };
    },
  };
}
