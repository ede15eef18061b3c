import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { listCounter, seekPage, type PaginationWithCursor, type SeekOrder, type SeekParams } from './seek.js';

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
const ORDER: Record<TagSort, SeekOrder> = {
  popular: {
    direction: 'desc',
    keys: [
      { expr: sql`questions_count`, type: 'int' },
      { expr: sql`id`, type: 'int' },
    ],
  },
  name: {
    direction: 'asc',
    keys: [
      { expr: sql`name`, type: 'text' },
      { expr: sql`id`, type: 'int' },
    ],
  },
  newest: {
    direction: 'desc',
    keys: [
      { expr: sql`created_at`, type: 'timestamptz' },
      { expr: sql`id`, type: 'int' },
    ],
  },
};

export function tagsRepository(db: Db) {
  return {
    /** One page by page number or cursor; the total is the maintained 'tags' counter (migration 0009). */
    async list(
      params: SeekParams & { sort: TagSort },
    ): Promise<{ tags: TagView[]; pagination: PaginationWithCursor }> {
      const { items, pagination } = await seekPage<TagView>(
        db,
        {
          list: JSON.stringify(['tags', params.sort]),
          columns: sql`id, name, slug, description, questions_count`,
          from: sql`tags`,
          where: sql`true`,
          order: ORDER[params.sort],
          total: listCounter(sql`'tags'`),
        },
        params,
      );
      return { tags: items, pagination };
    },
  };
}
