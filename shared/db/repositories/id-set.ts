import { sql, type SQL } from 'drizzle-orm';

/**
 * One id or several (the `{ids}` of `/users/3;8;2/…`), as a condition on a column: a plain equality for one id,
 * which keeps an index range in the list's order, and `= ANY(array)` for several.
 */
export type IdSet = number | number[];

export const idArray = (ids: number[]) => `{${ids.join(',')}}`;

export function inIdSet(column: SQL, ids: IdSet): SQL {
  if (typeof ids === 'number') return sql`${column} = ${ids}`;
  return ids.length === 1 ? sql`${column} = ${ids[0]}` : sql`${column} = ANY(${idArray(ids)}::int[])`;
}

/** The ids as a list: what the single-id forms of the lists keep in their cursors' names. */
export const idsOf = (ids: IdSet): number[] => (typeof ids === 'number' ? [ids] : ids);
