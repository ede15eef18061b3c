import { isInt4Id } from '../../shared/db/int4.js';
import { ValidationError } from '../../shared/errors.js';

/** At most this many ids in one `{ids}` path parameter (`/questions/12;15;19`), as Stack Exchange's vectors. */
export const MAX_IDS = 100;

/**
 * The ids of a vector parameter, first occurrence of each kept in the order asked; undefined when the parameter is a
 * single key (which keeps its single-item answer). A bad id or more than MAX_IDS is a 400.
 */
export function idVector(raw: string): number[] | undefined {
  if (!raw.includes(';')) return undefined;
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
