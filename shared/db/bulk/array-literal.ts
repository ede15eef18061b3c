/**
 * Encodes a JS array as a PostgreSQL array literal ('{"a","b",NULL}'). Bulk inserts pass one literal per column
 * as a plain text parameter and cast it (`$1::int[]`), which both postgres.js and PGlite send verbatim: no
 * driver-specific array typing, and one parameter per column whatever the number of rows.
 */
export type Cell = string | number | boolean | Date | null | undefined;

const QUOTE = /[\\"]/g;
// NUL cannot be stored in a text column; real dumps occasionally contain it.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const NUL = /\u0000/g;

function element(value: Cell): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot store ${value} in a bulk insert`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const text = value instanceof Date ? value.toISOString() : value.replace(NUL, '');
  return `"${text.replace(QUOTE, (c) => `\\${c}`)}"`;
}

export function arrayLiteral(values: readonly Cell[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    out += element(values[i]);
  }
  return `${out}}`;
}
