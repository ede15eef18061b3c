import { isInt4Id } from '../../shared/db/int4.js';
import { ValidationError } from '../../shared/errors.js';

/** At most this many ids in one `{ids}` path parameter (`/questions/12;15;19`), as Stack Exchange's vectors. */
export const MAX_IDS = 100;

/** Whether a key parameter is a vector (several ids) rather than a single key, valid or not. */
export const isIdVector = (raw: string): boolean => raw.includes(';');

/**
 * The ids of a vector parameter, first occurrence of each kept in the order asked; undefined when the parameter is a
 * single key (which keeps its single-item answer). A bad id or more than MAX_IDS is a 400.
 */
export function idVector(raw: string): number[] | undefined {
  if (!isIdVector(raw)) return undefined;
  const parts = raw.split(';');
  if (parts.length > MAX_IDS) throw new ValidationError(`At most ${MAX_IDS} ids, separated by ";"`);
  const ids = parts.map((part) => {
    const id = /^[0-9]{1,10}$/.test(part) ? Number(part) : NaN;
    if (!isInt4Id(id)) {
      throw new ValidationError(`Invalid id "${part.slice(0, 32)}": ids are integers from 1 to 2147483647`);
    }
    return id;
  });
  return [...new Set(ids)];
}

/**
 * The users (or other rows) a per-item list route reads (`/users/{ids}/timeline`): the vector's ids, or the single
 * id. A single id that is not an integer from 1 is a 400; one past int4 names no row (`exists: false`, a 404 for the
 * caller), as on the single-item routes. Unknown ids of a vector are simply left out by the queries.
 */
export function idList(raw: string): { ids: number[]; single: boolean; exists: boolean } {
  const vector = idVector(raw);
  if (vector) return { ids: vector, single: false, exists: true };
  const id = /^[0-9]{1,20}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw new ValidationError('id must be an integer from 1');
  return { ids: [id], single: true, exists: isInt4Id(id) };
}
