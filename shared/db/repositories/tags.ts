import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.js';
import { offsetOf, paginate, rows, type PageParams, type Pagination } from './pagination.js';

export const TAG_SORTS = ['popular', 'name', 'newest'] as const;
export type TagSort = (typeof TAG_SORTS)[number];

export interface TagView {
  id: number;
  name: string;
  slug: string;
  description: string;
  questions_count: number;
}

// popular and newest end with id desc (their indexes); name is unique, id only makes the order total.
const ORDER: Record<TagSort, SQL> = {
  popular: sql`questions_count DESC NULLS LAST, id DESC NULLS LAST`,
  name: sql`name ASC, id ASC`,
  newest: sql`created_at DESC NULLS LAST, id DESC NULLS LAST`,
};

export function tagsRepository(db: Db) {
  return {
    async list(params: PageParams & { sort: TagSort }): Promise<{ tags: TagView[]; pagination: Pagination }> {
      const [found, [count]] = await Promise.all([
        rows<TagView>(
          db,
          sql`SELECT id, name, slug, description, questions_count FROM tags
              ORDER BY ${ORDER[params.sort]} LIMIT ${params.limit} OFFSET ${offsetOf(params)}`,
        ),
        rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM tags`),
      ]);
      return { tags: found, pagination: paginate(params, count?.n ?? 0) };
    },
  };
}
