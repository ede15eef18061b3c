import { ValidationError } from '../../errors.js';

/**
 * The opaque `cursor` of every list: the sort key of the last row a page showed, the list it belongs to (its sort
 * and filters) and the number the next page would have had. Clients treat it as a string; base64url of JSON keeps it
 * URL-safe without escaping. A cursor names a position by key, not by count, so walking a list with cursors while
 * rows are inserted or removed never shows a row twice and never skips one that stayed in place.
 *
 * The key is text as PostgreSQL printed it (timestamps to the microsecond), so it compares exactly when cast back.
 */
export interface ListCursor {
  /** Which list (sort and filters); a cursor of another list is refused. */
  list: string;
  /** The last shown row's sort key, id last. */
  key: (string | number)[];
  /** The page number the next page has. */
  page: number;
}

const VERSION = 1;
/**
 * Longer than any cursor this module writes (an id and one key: a number, a timestamp or a name such as a display
 * name or tag name); longer input is refused before parsing.
 */
export const MAX_CURSOR_LENGTH = 4096;

export function encodeCursor(cursor: ListCursor): string {
  const payload = { v: VERSION, l: cursor.list, k: cursor.key, p: cursor.page };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const invalid = () => new ValidationError('Invalid cursor: pass the next_cursor of the same list unchanged');

/** The cursor's position in `list`, or a 400 for anything this module did not write for that list. */
export function decodeCursor(text: string, list: string, keyLength: number): ListCursor {
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { v, l, k, p } = (payload ?? {}) as Record<string, unknown>;
  const keyOk =
    Array.isArray(k) &&
    k.length === keyLength &&
    k.every((part) => typeof part === 'string' || Number.isSafeInteger(part));
  if (v !== VERSION || typeof l !== 'string' || !keyOk || !Number.isSafeInteger(p) || (p as number) < 1) {
    throw invalid();
  }
  if (l !== list)
    throw new ValidationError('Invalid cursor: it belongs to another list (sort or filters changed)');
  return { list: l, key: k as (string | number)[], page: p as number };
}
