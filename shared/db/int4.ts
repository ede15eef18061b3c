/**
 * The largest PostgreSQL int4. Every id column and every count the API takes is an int4: a larger number can
 * match no row, and PostgreSQL rejects it as a parameter, so schemas and repositories bound ids by this one value.
 */
export const MAX_INT4 = 2_147_483_647;

/** A value that can be an id of an int4 column (ids start at 1). */
export const isInt4Id = (id: number): boolean => Number.isInteger(id) && id >= 1 && id <= MAX_INT4;
