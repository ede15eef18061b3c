import { SQL, StringChunk, type Query } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';

/**
 * The text and parameters of a statement built with drizzle's `sql` template, as PostgreSQL receives them.
 *
 * The read path builds each statement from `sql` fragments on every request; drizzle's own compiler checks every
 * chunk against a dozen entity kinds (tables, columns, views, enums, subqueries…) and merges a result object per
 * chunk, which cost the service more CPU per list than PostgreSQL spent answering it. Raw statements hold only three
 * kinds of chunk: literal text, nested `sql`, and values (each a parameter, `$1`, `$2`… in order). Those are compiled
 * here in one pass into one string; a statement holding anything else (a column or table object, a `Param` with an
 * encoder, an inlined fragment, an array spread as a list) is compiled by drizzle, so the result is always drizzle's.
 */

const DIALECT = new PgDialect();

/** Thrown inside the walk when a chunk is not one of the three plain kinds; never leaves this module. */
const NOT_PLAIN = Symbol('not plain');

export function statementText(statement: SQL): Query {
  const params: unknown[] = [];
  try {
    return { sql: walk(statement, params), params };
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    const { sql, params: drizzleParams } = DIALECT.sqlToQuery(statement);
    return { sql, params: drizzleParams };
  }
}

function walk(statement: SQL, params: unknown[]): string {
  // `inlineParams()` fragments (private in drizzle's types) print their values into the text: drizzle's job.
  if ((statement as unknown as { shouldInlineParams: boolean }).shouldInlineParams) throw NOT_PLAIN;
  let text = '';
  for (const chunk of statement.queryChunks as unknown[]) {
    if (chunk instanceof StringChunk) {
      const parts = chunk.value;
      text += parts.length === 1 ? parts[0]! : parts.join('');
    } else if (chunk instanceof SQL) text += walk(chunk, params);
    else if (chunk === undefined) continue;
    else if (isPlainValue(chunk)) {
      params.push(chunk);
      text += `$${params.length}`;
    } else throw NOT_PLAIN;
  }
  return text;
}

// What drizzle sends as a parameter unchanged: anything that is not an entity, a wrapper of SQL or an array.
function isPlainValue(value: unknown): boolean {
  if (value === null) return true;
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint') return true;
  return value instanceof Date;
}
