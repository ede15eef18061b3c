import { describe, expect, it } from 'vitest';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { statementText } from '../../shared/db/statement-text.js';
import { Random } from '../../shared/demo/prng.js';

// The compiler must give exactly drizzle's text and parameters for every statement, plain or not.
const drizzle = (statement: SQL) => {
  const { sql: text, params } = new PgDialect().sqlToQuery(statement);
  return { sql: text, params };
};

const people = pgTable('people', { id: integer('id').primaryKey(), name: text('name') });

const VALUES: unknown[] = [
  0,
  -1,
  2_147_483_647,
  1.5,
  '',
  "it's",
  'a$1b',
  '\u0000',
  true,
  false,
  null,
  10n,
  new Date(0),
];

/** A random statement of raw text, nested fragments, joins, raw text and values, optionally with a chunk of another kind. */
function randomStatement(random: Random, depth: number, exotic: boolean): SQL {
  const parts: SQL[] = [];
  const n = random.int(0, 4);
  for (let i = 0; i < n; i++) {
    const pick = random.int(0, exotic ? 9 : 5);
    if (pick === 0 && depth > 0) parts.push(sql`(${randomStatement(random, depth - 1, exotic)})`);
    else if (pick === 1) parts.push(sql`x = ${VALUES[random.int(0, VALUES.length - 1)]}`);
    else if (pick === 2) parts.push(sql.raw(`raw_${i}`));
    else if (pick === 3 && depth > 0)
      parts.push(
        sql.join([randomStatement(random, depth - 1, exotic), sql`${random.int(0, 9)}::int`], sql`, `),
      );
    else if (pick === 4) parts.push(sql``);
    else if (pick === 5) parts.push(sql`${undefined}`);
    else if (pick === 6) parts.push(sql`${people.id} = ${random.int(0, 9)}`);
    else if (pick === 7) parts.push(sql`${people}`);
    else if (pick === 8) parts.push(sql`in ${[1, 'two', random.int(0, 9)]}`);
    else parts.push(sql`${sql.param(random.int(0, 9))} AND ${sql.identifier('n')}`);
  }
  return sql`SELECT ${sql.join(parts, sql` `)} FROM t WHERE a = ${random.int(0, 99)}`;
}

describe('statementText', () => {
  it('numbers the values of nested fragments in order, as drizzle does', () => {
    const inner = sql`b = ${'x'} AND c = ${2}`;
    const statement = sql`SELECT ${sql.raw('a')} FROM t WHERE ${inner} AND d IN (${sql.join([sql`${3}`, sql`${4}`], sql`, `)})`;
    expect(statementText(statement)).toEqual({
      sql: 'SELECT a FROM t WHERE b = $1 AND c = $2 AND d IN ($3, $4)',
      params: ['x', 2, 3, 4],
    });
    expect(statementText(statement)).toEqual(drizzle(statement));
  });

  it('gives drizzle’s text and parameters for random plain statements', () => {
    const random = new Random(20261203);
    for (let i = 0; i < 2000; i++) {
      const statement = randomStatement(random, 3, false);
      expect(statementText(statement)).toEqual(drizzle(statement));
    }
  });

  it('hands statements holding columns, tables, arrays, params or identifiers to drizzle', () => {
    const random = new Random(7);
    let exotic = 0;
    for (let i = 0; i < 2000; i++) {
      const statement = randomStatement(random, 3, true);
      const ours = statementText(statement);
      expect(ours).toEqual(drizzle(statement));
      if (/"|\(\$\d+, /.test(ours.sql)) exotic++;
    }
    // The corpus did exercise the fallback (quoted names, arrays spread as lists).
    expect(exotic).toBeGreaterThan(100);
  });

  it('keeps inlined fragments inlined', () => {
    const statement = sql`SELECT ${sql`${5}`.inlineParams()}, ${6}`;
    expect(statementText(statement)).toEqual(drizzle(statement));
    expect(statementText(statement).sql).toBe('SELECT 5, $1');
  });
});
