import { sql, type SQL } from 'drizzle-orm';
import { ValidationError } from '../../errors.js';
import type { Db } from '../client.js';
import { MAX_INT4 } from '../int4.js';
import { rows } from './pagination.js';
import type { KeyType, SeekOrder } from './seek.js';

/**
 * Date windows, ranges on the sort's key and the direction of a list (Stack Exchange's `fromdate`, `todate`, `min`,
 * `max`, `order`), and the bounded total of a list that has no counter of its own.
 */

export const ORDERS = ['asc', 'desc'] as const;
export type Direction = (typeof ORDERS)[number];

export interface WindowParams {
  /** Creation date from (inclusive): ISO 8601 or Unix seconds. */
  fromdate?: string;
  /** Creation date to (inclusive). */
  todate?: string;
  /** The sort key from (inclusive): a number, a date or a name, as the sort's key is. */
  min?: string;
  max?: string;
  order?: Direction;
}

/**
 * A filtered list without a maintained counter counts at most this many rows per request: its total is exact below
 * the bound and "at least the bound" at it (`pagination.total_bounded`); pages past it are reached by cursor.
 */
export const COUNT_BOUND = 10_000;

const UNIX = /^-?[0-9]{1,11}$/;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
// Dates PostgreSQL and JavaScript both hold exactly; anything outside is refused rather than clamped.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

// A `+02:00` offset sent unencoded arrives as " 02:00" (a + in a query string is a space): read it as the +.
const PLUS_AS_SPACE = /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}(?::?\d{2})?)$/i;

const leap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** An instant given as Unix seconds or ISO 8601 (a date alone is its midnight, no zone is UTC), as ISO 8601 UTC. */
export function parseInstant(text: string, name: string): string {
  const bad = () =>
    new ValidationError(
      `${name} must be a date: ISO 8601 (2024-01-31, 2024-01-31T12:00:00Z) or Unix seconds`,
    );
  let ms: number;
  if (UNIX.test(text)) ms = Number(text) * 1000;
  else {
    const m = ISO.exec(text.replace(PLUS_AS_SPACE, '$1+$2'));
    if (!m) throw bad();
    const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
    const month = Number(mo);
    const day = Number(d);
    const daysInMonth =
      new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leap(Number(y)) ? 1 : 0);
    if (
      month < 1 ||
      month > 12 ||
      day < 1 ||
      day > daysInMonth ||
      Number(h) > 23 ||
      Number(mi) > 59 ||
      Number(s) > 59
    ) {
      throw bad();
    }
    const offset =
      zone.toUpperCase() === 'Z'
        ? 'Z'
        : zone.length === 3
          ? `${zone}:00`
          : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
    ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${frac.slice(0, 4)}${offset}`);
    if (Number.isNaN(ms)) throw bad();
  }
  if (!(ms >= EARLIEST && ms <= LATEST)) throw bad();
  return new Date(ms).toISOString();
}

function keyBound(type: KeyType, text: string, name: string): SQL {
  if (type === 'timestamptz') return sql`${parseInstant(text, name)}::timestamptz`;
  if (type === 'int') {
    if (!/^-?[0-9]{1,10}$/.test(text) || Math.abs(Number(text)) > MAX_INT4) {
      throw new ValidationError(`${name} must be an integer for this sort`);
    }
    return sql`${Number(text)}::int`;
  }
  return sql`${text.toLowerCase()}::text`;
}

/** The filters of a window: `date` is the creation date, `key` the sort's first key (min/max apply to it). */
export function windowConditions(params: WindowParams, date: SQL, key: { expr: SQL; type: KeyType }): SQL[] {
  const conditions: SQL[] = [];
  if (params.fromdate !== undefined)
    conditions.push(sql`${date} >= ${parseInstant(params.fromdate, 'fromdate')}::timestamptz`);
  if (params.todate !== undefined)
    conditions.push(sql`${date} <= ${parseInstant(params.todate, 'todate')}::timestamptz`);
  if (params.min !== undefined) conditions.push(sql`${key.expr} >= ${keyBound(key.type, params.min, 'min')}`);
  if (params.max !== undefined) conditions.push(sql`${key.expr} <= ${keyBound(key.type, params.max, 'max')}`);
  return conditions;
}

export const isWindowed = (params: WindowParams): boolean =>
  params.fromdate !== undefined ||
  params.todate !== undefined ||
  params.min !== undefined ||
  params.max !== undefined;

const REVERSED = new WeakMap<SeekOrder, SeekOrder>();

/**
 * The list's order in the direction asked (its own when none is): the other direction walks its index backwards.
 * One reversed copy per order, so that what seek.ts builds once per order object is built once for it too.
 */
export function directed(order: SeekOrder, asked: Direction | undefined): SeekOrder {
  if (asked === undefined || asked === order.direction) return order;
  let reversed = REVERSED.get(order);
  if (!reversed) REVERSED.set(order, (reversed = { ...order, reversed: true }));
  return reversed;
}

/** The window's part of a list's name, so that a cursor is refused by a list with another window or direction. */
export const windowName = (params: WindowParams) => [
  params.fromdate ?? null,
  params.todate ?? null,
  params.min ?? null,
  params.max ?? null,
  params.order ?? null,
];

/** The number of rows of a filtered list, counting at most COUNT_BOUND of them. */
export async function boundedCount(db: Db, from: SQL, where: SQL): Promise<number> {
  const [row] = await rows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT ${COUNT_BOUND}) counted`,
  );
  return row?.n ?? 0;
}

/** A page's pagination, saying when its total was counted up to the bound rather than exactly. */
export function boundedPagination<P extends { total_items: number }>(
  pagination: P,
  list: { bounded?: boolean },
): P & { total_bounded?: true } {
  return list.bounded && pagination.total_items >= COUNT_BOUND
    ? { ...pagination, total_bounded: true }
    : pagination;
}
