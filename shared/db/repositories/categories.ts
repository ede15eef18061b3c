import { asc } from 'drizzle-orm';
import type { Db } from '../client.js';
import { categories } from '../schema/index.js';

export function categoriesRepository(db: Db) {
  return {
    list: () =>
      db
        .select({
          id: categories.id,
          name: categories.name,
          slug: categories.slug,
          description: categories.description,
          questions_count: categories.questionsCount,
          icon: categories.icon,
        })
        .from(categories)
        .orderBy(asc(categories.name), asc(categories.id)),
  };
}
