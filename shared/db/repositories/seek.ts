import { sql, type SQL } from 'drizzle-orm';
import { textProblem } from '../../text-problem.js';
import { ValidationError } from '../../errors.js';
import type { Db } from '../client.js';
import { preparedQuery } from '../prepared.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { Pagination } from './pagination.js';

/**
 * Pages of a list read by seeking on an index instead of counting or skipping from the top:
 *
 * - with a `cursor`, the page starts just past the cursor's key: `(key, id) < (last key, last id)` is a range on the
 *   list's index, so every page costs what page 1 costs, at any depth, and rows inserted or removed meanwhile never
 *   shift it (no duplicate, no gap).
 * - with a `page` number, the page is walked from whichever end of the index is nearer (the exact total comes from a
 *   maintained counter), so the last pages cost what the first ones cost; the middle of the list is the farthest
 *   point, at half the entries a plain OFFSET would skip there.
 *
 * Every order is total: its keys end with the id, all in one direction, and an index gives exactly that order (and
 * its reverse, by walking it backwards).
 */

export type KeyType = 'timestamptz' | 'int' | 'text' | 'uuid';

export interface SeekOrder {
  /** The sort keys, the unique id last, each an expression of the list's FROM and the type it is compared as. */
  keys: { expr: SQL; type: KeyType }[];
  direction: 'asc' | 'desc';
  /**
   * The opposite order (`order=asc` on a descending list), read by walking the same index backwards: ASC NULLS FIRST
   * of a DESC NULLS LAST index, which a plain ASC (NULLS LAST) would not match.
   */
  reversed?: boolean;
}

export interface SeekParams {
  page: number;
  limit: number;
  cursor?: string;
}

export interface SeekList {
  /** Names the list (sort and filters) so that its cursors are refused by other lists. */
  list: string;
  /** What to select per row (the keys are added). */
  columns: SQL;
  /** FROM clause body and the filters. */
  from: SQL;
  where: SQL;
  order: SeekOrder;
  /**
   * The exact number of rows of the list, or a lower bound of it when `bounded`; or the expression that reads it
   * from a maintained counter, which a page that starts the list (page 1, a cursor) then reads in its own statement:
   * one round trip instead of two for the most common reads, and a total from the page's own snapshot.
   */
  total: number | SQL;
  /**
   * The total was counted up to a bound (a filtered list without a counter of its own): pages are then always read
   * from the top, and whether a next page exists is seen by reading one row more, not from the total.
   */
  bounded?: boolean;
  /**
   * The list is every row that list_counts counts per UTC day as `kind` (`day:<date>:<kind>`, migrations 0011, 0026
   * and 0030), ordered first by the timestamp those counters date. A page number deep in the list then starts its
   * walk at the day that holds its offset (dayAnchor) instead of an end of the list.
   */
  days?: DayCounted;
  /**
   * The list is every row that migration 0028's value_counts counts under this name, ordered by an int value (the
   * first key) and then the id: a page number deep in the list starts its walk at the block of ids, within one
   * value, that holds its offset (valueAnchor).
   */
  values?: ValueCounted;
}

/** A counter of list_counts (migration 0009 and later) as an int, 0 while it has no row: a list's `total`. */
export const listCounter = (scope: SQL): SQL =>
  sql`coalesce((SELECT n FROM list_counts WHERE scope = ${scope}), 0)::int`;

/** The lists whose rows migrations 0028, 0029 and 0033 count by their sort value. */
export type ValueCounted =
  | 'questions:votes'
  | 'questions:views'
  | `category:${number}:${'votes' | 'views'}`
  | `tag:${number}:${'votes' | 'views'}`
  | 'answers:votes'
  | 'comments:votes'
  | 'users:reputation'
  | 'users:name';

/**
 * The lists whose rows list_counts counts per UTC day of their created_at: all questions, answers and comments
 * (0011), the unanswered questions (0026), a category's questions and its unanswered ones, and users (0030).
 */
export type DayCounted =
  | 'questions'
  | 'answers'
  | 'comments'
  | 'unanswered'
  | `category:${number}`
  | `category-unanswered:${number}`
  | 'users';

/**
 * `next_cursor`: pass it as `cursor` for the page after this one; null on the last page, where `has_more` is false
 * (has_more is exactly `next_cursor !== null`).
 */
export type PaginationWithCursor = Pagination & { next_cursor: string | null };

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const MAX_INT4 = 2_147_483_647;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * How a walk reads the list's index: `backwards` when it goes against the index's own order (a reversed list, or a
 * walk from the far end, but not both), `descending` in the sort keys' terms.
 */
function walkOf(order: SeekOrder, reverseWalk: boolean): { backwards: boolean; descending: boolean } {
  const backwards = reverseWalk !== (order.reversed ?? false);
  return { backwards, descending: (order.direction === 'desc') !== backwards };
}

// ASC sorts NULLS LAST and DESC NULLS LAST, as the indexes are built; the reverse walks the same index backwards.
function orderOf(order: SeekOrder, reverseWalk: boolean, exprs: SQL[]): SQL {
  const { backwards, descending } = walkOf(order, reverseWalk);
  const direction = sql.raw(descending ? 'DESC' : 'ASC');
  const nulls = sql.raw(backwards ? 'NULLS FIRST' : 'NULLS LAST');
  return sql.join(
    exprs.map((expr) => sql`${expr} ${direction} ${nulls}`),
    sql`, `,
  );
}

/** A key as text that converts back to exactly the same value (timestamps to the microsecond, in UTC). */
function keyText(key: { expr: SQL; type: KeyType }): SQL {
  if (key.type === 'timestamptz')
    return sql`to_char(${key.expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  return key.type === 'uuid' ? sql`${key.expr}::text` : key.expr;
}

/**
 * A timestamp of the cursor's shape that names a real instant PostgreSQL accepts: month 13, 25 o'clock or 30 February
 * match the shape, and so does year 0, which PostgreSQL does not have.
 */
function isRealInstant(value: string): boolean {
  const ms = Date.parse(value);
  return (
    Number.isFinite(ms) &&
    !value.startsWith('0000') &&
    new Date(ms).toISOString().slice(0, 23) === value.slice(0, 23)
  );
}

export function keyValue(type: KeyType, value: string | number): SQL {
  const bad = () => new ValidationError('Invalid cursor: pass the next_cursor of the same list unchanged');
  if (type === 'int') {
    if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > MAX_INT4) throw bad();
    return sql`${value}::int`;
  }
  if (typeof value !== 'string') throw bad();
  if (type === 'timestamptz') {
    if (!TIMESTAMP.test(value) || !isRealInstant(value)) throw bad();
    return sql`${value}::timestamptz`;
  }
  if (type === 'uuid') {
    if (!UUID.test(value)) throw bad();
    return sql`${value}::uuid`;
  }
  // PostgreSQL's text holds no NUL and no lone surrogate: such a key was not written by us.
  if (textProblem(value)) throw bad();
  return sql`${value}::text`;
}

/** Rows after the key in the list's order (a row comparison, which a btree index answers as a range). */
function after(order: SeekOrder, key: (string | number)[]): SQL {
  const { columns } = fragmentsOf(order);
  const values = sql.join(
    order.keys.map((k, i) => keyValue(k.type, key[i]!)),
    sql`, `,
  );
  return walkOf(order, false).descending ? sql`(${columns}) < (${values})` : sql`(${columns}) > (${values})`;
}

type KeyedRow = Record<string, unknown>;

/**
 * The parts of a list's statements that depend only on its order, built once per order object (the orders are
 * module constants, and directed() keeps one reversed copy of each): a list's page is then assembled from a few
 * prebuilt fragments instead of rebuilding every key's expressions on every request.
 */
interface OrderFragments {
  /** The sort keys, for a row comparison with a cursor's key. */
  columns: SQL;
  /** The key values as the index holds them (seek_k*), selected by the walk. */
  keyValues: SQL;
  /** The keys as cursor text (seek_t*), for the page's rows only. */
  keyTexts: SQL;
  /** ORDER BY of the walk, and of the page's rows again by their seek_k* values: [forwards, reversed walk]. */
  orderBy: [SQL, SQL];
  pageOrder: [SQL, SQL];
}

const FRAGMENTS = new WeakMap<SeekOrder, OrderFragments>();

function fragmentsOf(order: SeekOrder): OrderFragments {
  let built = FRAGMENTS.get(order);
  if (built) return built;
  const exprs = order.keys.map((k) => k.expr);
  const seekKeys = order.keys.map((_, i) => sql.raw(`page.seek_k${i}`));
  built = {
    columns: sql.join(exprs, sql`, `),
    // A page number walks every row it skips through this select list, so nothing here may cost more than reading
    // the index (formatting a timestamp here made the middle of a 100k list 8 times slower).
    keyValues: sql.join(
      order.keys.map((k, i) => sql`${k.expr} AS ${sql.raw(`seek_k${i}`)}`),
      sql`, `,
    ),
    keyTexts: sql.join(
      order.keys.map((k, i) => sql`${keyText({ ...k, expr: seekKeys[i]! })} AS ${sql.raw(`seek_t${i}`)}`),
      sql`, `,
    ),
    orderBy: [orderOf(order, false, exprs), orderOf(order, true, exprs)],
    pageOrder: [orderOf(order, false, seekKeys), orderOf(order, true, seekKeys)],
  };
  FRAGMENTS.set(order, built);
  return built;
}

// The row without the statement's own columns (seek_*), copied rather than deleted from: an object that lost
// properties is slower to read and to serialise.
function splitKeys<T>(order: SeekOrder, row: KeyedRow): { row: T; key: (string | number)[] } {
  const key: (string | number)[] = [];
  for (let i = 0; i < order.keys.length; i++) key.push(row[`seek_t${i}`] as string | number);
  const rest: KeyedRow = {};
  for (const name in row) if (!name.startsWith('seek_')) rest[name] = row[name];
  return { row: rest as T, key };
}

const pagination = (
  page: number,
  limit: number,
  total: number,
  next: string | null,
): PaginationWithCursor => ({
  current_page: page,
  total_pages: Math.ceil(total / limit),
  total_items: total,
  per_page: limit,
  has_more: next !== null,
  next_cursor: next,
});

/**
 * Below this many rows to skip, a page number walks from the end of its list: reading the day counters or the value
 * counts costs about what walking this many index entries does.
 */
const ANCHOR_MIN_SKIP = 2000;

/** Where a walk deep into a list starts (dayAnchor, valueAnchor). */
export interface Anchor {
  /** The rows of the walk's order before the anchor. */
  before: number;
  /** The condition that starts the walk at the anchor, on the list's first sort key and its id. */
  bound: (first: SQL, id: SQL) => SQL;
}

/**
 * Where the walk to the `skip`-th row of a day-counted list can start: the day that holds that row, and how many
 * rows come before that day in the walk's direction. It sums the month counters to find the month that holds the row
 * (one row per month the site has posts), then that month's day counters (at most 31), so a page deep in a list of
 * millions reads a few dozen counters and walks at most one day's rows. Undefined when the months do not add up to
 * `total` or the month's days to the month (a write committed between the two reads, or a post dated where no
 * counter names it): the caller then walks from the end of the list as before.
 */
export async function dayAnchor(
  db: Db,
  kind: DayCounted,
  descending: boolean,
  skip: number,
  total: number,
): Promise<Anchor | undefined> {
  const direction = sql.raw(descending ? 'DESC' : 'ASC');
  // The scopes sort by date in the C collation (a cheaper sort than the database's). A kind's months, and a month's
  // days of it, are one range of migration 0031's indexes (its name after the date, then the scope); the LIKEs keep
  // only names of the right shape.
  const [found] = await preparedQuery<{ day: string; before: number }>(
    db,
    sql`WITH months AS (
          SELECT substr(scope, 7, 7) AS month, n,
                 (sum(n) OVER (ORDER BY scope COLLATE "C" ${direction} ROWS UNBOUNDED PRECEDING) - n)::bigint AS before,
                 sum(n) OVER ()::bigint AS total
          FROM list_counts
          WHERE scope LIKE 'month:%' AND substr(scope, 15) = ${kind}::text
            AND scope LIKE ('month:____-__:' || ${kind}::text)
        ), month AS (
          SELECT month, n, before FROM months
          WHERE total = ${total}::bigint AND before <= ${skip}::bigint
          ORDER BY before DESC LIMIT 1
        ), days AS (
          -- Lateral, so that the month found bounds the scan of its days (joined, the planner could scan every day
          -- of the kind and filter).
          SELECT x.day, m.n AS month_n, m.before + x.before_in AS before, x.month_total
          FROM month m CROSS JOIN LATERAL (
            SELECT substr(d.scope, 5, 10) AS day,
                   (sum(d.n) OVER (ORDER BY d.scope COLLATE "C" ${direction} ROWS UNBOUNDED PRECEDING)
                     - d.n)::bigint AS before_in,
                   sum(d.n) OVER ()::bigint AS month_total
            FROM list_counts d
            WHERE d.scope LIKE 'day:%' AND substr(d.scope, 16) = ${kind}::text
              AND d.scope COLLATE "C" >= 'day:' || m.month || '-' AND d.scope COLLATE "C" < 'day:' || m.month || '.'
              AND d.scope LIKE ('day:____-__-__:' || ${kind}::text)
          ) x
        )
        SELECT day, before FROM days WHERE month_total = month_n AND before <= ${skip}::bigint
        ORDER BY before DESC LIMIT 1`,
    // The counters' indexes by kind serve every kind and depth alike; planned per call this statement cost
    // PostgreSQL more than the page it anchors.
    { plans: 'reusable' },
  );
  // A day counter's name holds to_char's date; only a plain one (years 1000 to 9999) is a bound the walk can use.
  if (!found || !/^[1-9]\d{3}-\d{2}-\d{2}$/.test(found.day)) return undefined;
  const { day, before } = found;
  return {
    before,
    // Rows dated on the anchor day and beyond it in the walk's direction, by the same UTC day as the counters.
    bound: (at) =>
      descending
        ? sql`${at} < ((${day}::date + 1)::timestamp AT TIME ZONE 'UTC')`
        : sql`${at} >= (${day}::date::timestamp AT TIME ZONE 'UTC')`,
  };
}

/**
 * The value's bits each value level drops (migration 0028's agora_value_count_keys), coarsest first: each level
 * splits a bucket of the one above into at most 2^8 buckets. The levels after them count each value per range of
 * ids: level 5 per span of 2^16 (migration 0039), then level 4 per block of 2^12, sixteen to a span.
 */
const LEVEL_SHIFTS = [24, 16, 8, 0] as const;
const ID_BITS: Record<number, number> = { 4: 12, 5: 16 };

/** The values a bucket of a value level holds (an arithmetic shift, so negative values bucket the same way). */
export function levelRange(level: number, bucket: number): { lo: number; hi: number } {
  const span = 2 ** LEVEL_SHIFTS[level]!;
  return { lo: bucket * span, hi: bucket * span + span - 1 };
}

/**
 * Where the walk to the `skip`-th row of a value-counted list can start, as dayAnchor does for the lists by date:
 * level by level (migration 0028), it sums the counts inside the bucket the level above chose, in the walk's
 * direction, to find the one that holds the row, down to a block of ids within one value (or to the value, for a
 * list counted without blocks: a tag's views, migration 0033). A level whose counts do
 * not add up to the bucket above (a write committed between two reads) stops the descent there; when the top level
 * does not add up to `total` (or a table was loaded without its recount) it is undefined, and the caller walks as
 * before.
 */
export async function valueAnchor(
  db: Db,
  list: ValueCounted,
  descending: boolean,
  skip: number,
  total: number,
): Promise<Anchor | undefined> {
  // One row per level the descent reached (migration 0039's agora_value_anchor_spans), the deepest last.
  const reached = await preparedQuery<{ level: number; bucket: number; block: number; before: number }>(
    db,
    sql`SELECT level, bucket, block, before FROM agora_value_anchor_spans(${list}::text, ${descending}::boolean,
          ${skip}::bigint, ${total}::bigint)`,
    { plans: 'reusable' },
  );
  const deepest = reached.at(-1);
  if (!deepest) return undefined;
  const [at, bucket, before] = [Number(deepest.level), Number(deepest.bucket), Number(deepest.before)];
  const idBits = ID_BITS[at];
  if (idBits !== undefined) {
    // Rows from the span's or block's first id onwards in the walk's direction, within the one value.
    const block = Number(deepest.block);
    const edge = (descending ? block + 1 : block) * 2 ** idBits;
    return {
      before,
      bound: (v, id) =>
        descending
          ? sql`(${v}, ${id}) < (${bucket}::int, ${edge}::bigint)`
          : sql`(${v}, ${id}) >= (${bucket}::int, ${edge}::bigint)`,
    };
  }
  const { lo, hi } = levelRange(at, bucket);
  if (list === 'users:name') return { before, bound: (name) => nameBucketsBound(name, descending, lo, hi) };
  return { before, bound: (v) => (descending ? sql`${v} <= ${hi}::int` : sql`${v} >= ${lo}::int`) };
}

/**
 * The number of the last bucket of names: user_name_bounds is numbered from the end (migration 0038), so the last
 * bound has this number whatever the bounds are; the first is '', before every name.
 */
const LAST_NAME_BUCKET = 2 ** 24 - 1;

/**
 * Rows from the buckets lo..hi of names onwards in the walk's direction, on the list's key (the lowered name in
 * agora_names): a bucket starts at its bound. A range's lo may lie before the first bucket (the levels above split
 * the numbers, not the bounds), hence the first bound at or after it.
 */
function nameBucketsBound(name: SQL, descending: boolean, lo: number, hi: number): SQL {
  if (descending)
    return hi >= LAST_NAME_BUCKET
      ? sql`true`
      : sql`${name} < (SELECT bound FROM user_name_bounds WHERE bucket = ${hi + 1}::int)`;
  return sql`${name} >= (SELECT bound FROM user_name_bounds WHERE bucket >= ${lo}::int ORDER BY bucket LIMIT 1)`;
}

/** The pagination of a list that has no rows (a filter names nothing). */
export const emptyPagination = (params: SeekParams): PaginationWithCursor =>
  pagination(params.page, params.limit, 0, null);

/** One page of the list, by cursor when given, else by page number. */
export async function seekPage<T>(
  db: Db,
  list: SeekList,
  params: SeekParams,
): Promise<{ items: T[]; pagination: PaginationWithCursor }> {
  const { order } = list;
  const counted = typeof list.total === 'number' ? undefined : list.total;
  const fragments = fragmentsOf(order);
  const select = (where: SQL, reverse: boolean, take: number, skip: number, withTotal = false) => {
    const walk = reverse ? 1 : 0;
    const page = sql`SELECT ${list.columns}, ${fragments.keyValues} FROM ${list.from} WHERE ${where}
          ORDER BY ${fragments.orderBy[walk]} LIMIT ${take} OFFSET ${skip}`;
    const total = withTotal && counted ? sql`, (${counted}) AS seek_total` : sql``;
    // Every value is a parameter, so the text depends only on the list's shape (sort, filters, direction): a bounded
    // set of texts, each parsed once per connection.
    return preparedQuery<KeyedRow>(
      db,
      sql`SELECT page.*, ${fragments.keyTexts}${total} FROM (${page}) page ORDER BY ${fragments.pageOrder[walk]}`,
    );
  };
  // The counter on its own: for a page whose place depends on the total, or when the page's statement found no row.
  const readTotal = async (): Promise<number> => {
    if (!counted) return list.total as number;
    const [row] = await preparedQuery<{ n: number }>(db, sql`SELECT (${counted}) AS n`, {
      plans: 'reusable',
    });
    return Number(row?.n ?? 0);
  };
  const totalWith = (found: KeyedRow[]): Promise<number> =>
    counted && found.length > 0 ? Promise.resolve(Number(found[0]!.seek_total)) : readTotal();

  // The page's rows and its pagination, with a cursor to the next page from its last row when there is one.
  const answer = (
    found: { row: T; key: (string | number)[] }[],
    page: number,
    total: number,
    more: boolean,
  ) => {
    const last = found.at(-1);
    const next = more && last ? encodeCursor({ list: list.list, key: last.key, page: page + 1 }) : null;
    return { items: found.map((r) => r.row), pagination: pagination(page, params.limit, total, next) };
  };

  if (params.cursor !== undefined) {
    const cursor = decodeCursor(params.cursor, list.list, order.keys.length);
    // One row more than the page says whether a next page exists, without counting.
    const raw = await select(
      sql`${list.where} AND ${after(order, cursor.key)}`,
      false,
      params.limit + 1,
      0,
      true,
    );
    const found = raw.map((r) => splitKeys<T>(order, r));
    return answer(
      found.slice(0, params.limit),
      cursor.page,
      await totalWith(raw),
      found.length > params.limit,
    );
  }

  const offset = (params.page - 1) * params.limit;
  if (offset === 0 && counted) {
    // The first page is read from the top whatever the total: both in one statement.
    const raw = await select(list.where, false, params.limit, 0, true);
    const total = await totalWith(raw);
    return answer(
      raw.map((r) => splitKeys<T>(order, r)),
      1,
      total,
      raw.length < total,
    );
  }
  const total = await readTotal();
  if (offset >= total) return answer([], params.page, total, false);
  // A bounded total caps the offset too: pages past the counted rows are reached by cursor only.
  if (list.bounded) {
    const found = (await select(list.where, false, params.limit + 1, offset)).map((r) =>
      splitKeys<T>(order, r),
    );
    return answer(found.slice(0, params.limit), params.page, total, found.length > params.limit);
  }
  const end = Math.min(offset + params.limit, total);
  // Nearer the end: walk the index backwards over the rows after the page, then put the page back in order.
  const fromEnd = total - end < offset;
  const walk = async (reverse: boolean, take: number, skip: number) => {
    const descending = walkOf(order, reverse).descending;
    const anchor =
      skip < ANCHOR_MIN_SKIP
        ? undefined
        : list.days
          ? await dayAnchor(db, list.days, descending, skip, total)
          : list.values
            ? await valueAnchor(db, list.values, descending, skip, total)
            : undefined;
    if (!anchor) return select(list.where, reverse, take, skip);
    const bound = anchor.bound(order.keys[0]!.expr, order.keys.at(-1)!.expr);
    return select(sql`${list.where} AND ${bound}`, reverse, take, skip - anchor.before);
  };
  const raw = fromEnd
    ? (await walk(true, end - offset, total - end)).reverse()
    : await walk(false, params.limit, offset);
  const found = raw.map((r) => splitKeys<T>(order, r));
  return answer(found, params.page, total, offset + found.length < total);
}
