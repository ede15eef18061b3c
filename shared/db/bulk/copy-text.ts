import type { Cell } from './array-literal.js';

/**
 * One row in COPY's text format: values separated by tabs, `\N` for NULL, and backslash, tab, newline and
 * carriage return escaped in text. An array column's value is its array literal (arrayLiteral), escaped the same.
 */
// NUL cannot be stored in a text column; real dumps occasionally contain it.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const SPECIAL = /[\\\t\n\r\u0000]/;

/** Most values need no escape; those that do go through one native replace per character class (no callback). */
function escapeText(value: string): string {
  if (!SPECIAL.test(value)) return value;
  return (
    value
      .replace(/\\/g, '\\\\')
      .replace(/\t/g, '\\t')
      .replace(/\n/g, '\\n')
      .replace(/\r/g, '\\r')
      // eslint-disable-next-line no-control-regex -- matching NUL is the point
      .replace(/\u0000/g, '')
  );
}

function field(value: Cell): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot store ${value} in a bulk insert`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  return escapeText(value);
}

export function copyRow(values: readonly Cell[]): string {
  let out = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += '\t';
    out += field(values[i]);
  }
  return `${out}\n`;
}
