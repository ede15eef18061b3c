import { sql, type SQL } from 'drizzle-orm';

/** Helpers shared by the read repositories: page arithmetic, raw rows on either driver, ISO timestamps. */

export interface PageParams {
  /** 1-based page number. */
  page: number;
  /** Items per page. */
  limit: number;
}

export interface Pagination {
  current_page: number;
  total_pages: number;
  total_items: number;
  per_page: number;
  /**
   * Whether a next page exists: next_cursor is not null (a list with cursors), or a later page number has items
   * (search). Before next_cursor: the serialiser's key order (services/http/json-response.ts).
   */
  has_more: boolean;
  /** The cursor of the next page (seek.ts), null on the last page; absent where a list has none (search). */
  next_cursor?: string | null;
}

export const offsetOf = ({ page, limit }: PageParams): number => (page - 1) * limit;

export const paginate = ({ page, limit }: PageParams, total: number): Pagination => ({
  current_page: page,
  total_pages: Math.ceil(total / limit),
  total_items: total,
  per_page: limit,
  has_more: page * limit < total,
});

export { rows } from './rows.js';

/**
 * A timestamptz as an ISO 8601 UTC string with milliseconds, formatted by PostgreSQL: the drivers disagree on how
 * raw timestamps come back (drizzle's postgres.js driver leaves them as server text), so SQL decides.
 */
export const iso = (column: SQL): SQL =>
  sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export { MAX_INT4 } from '../int4.js';

/** The Markdown source, for posts written through the API only (imported posts are HTML). */
export const markdownOf = (source: string | null): { content_markdown?: string } =>
  source === null ? {} : { content_markdown: source };
