import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../shared/db/repositories/rows.js';
import {
  createTermRarity,
  lexemesOf,
  matchesOf,
  type StatisticsRow,
} from '../../shared/db/repositories/word-lookup.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addUser } from './fixtures.js';

// Related questions, "ask a question" suggestions and the AI's retrieval look a text up by its rarest words, by the
// word frequencies of the statistics (pg_stats), read once and kept in the process.

describe('the rarest words of a text', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime({});
    const db = runtime.database.db;
    const author = await addUser(db);
    // "lager" in every question, "wort" in half, "kveik" and "sparge" in none.
    for (let i = 0; i < 40; i++)
      await addQuestion(db, {
        authorId: author.id,
        title: i % 2 === 0 ? `Lager wort question ${i}` : `Lager question ${i}`,
      });
    await runtime.database.query(sql`ANALYZE questions`);
  });

  afterAll(async () => {
    await runtime?.close();
  });

  it('ranks unlisted words first in the order they appear, then the listed ones by frequency, and reads the statistics once', async () => {
    const db = runtime.database.db;
    const reads: StatisticsRow[] = [];
    const rarity = createTermRarity(async (statement: SQL) => {
      const read = await rows<StatisticsRow>(db, statement);
      reads.push(...read);
      return read;
    });
    const [text] = await rows<{ lexemes: string[] }>(
      db,
      sql`SELECT ${lexemesOf(sql`${'Lager wort with kveik, then a sparge'}::text`)} AS lexemes`,
    );
    expect(text!.lexemes).toEqual(['lager', 'wort', 'kveik', 'sparg']);
    const queries = async (terms: number) =>
      (await rarity.rarest(text!.lexemes, 'questions', terms)).map((term) => term.query);
    expect(await queries(3)).toEqual(["'kveik'", "'sparg'", "'wort'"]);
    expect(await queries(8)).toEqual(["'kveik'", "'sparg'", "'wort'", "'lager'"]);
    // One read, with the table's size: 40 rows, where every word brings all its matches.
    expect(reads.map((read) => read.rows)).toEqual([40]);
    expect((await rarity.rarest(text!.lexemes, 'questions', 8)).map((term) => term.matches)).toEqual([
      150, 150, 150, 150,
    ]);
  });

  it('quotes a lexeme with an apostrophe as tsquery text, and reads again after a failed read', async () => {
    const db = runtime.database.db;
    let fail = true;
    const rarity = createTermRarity(async (statement: SQL) => {
      if (fail) {
        fail = false;
        throw new Error('connection lost');
      }
      return rows(db, statement);
    });
    await expect(rarity.rarest(['lager'], 'questions', 1)).rejects.toThrow('connection lost');
    expect(await rarity.rarest(["o'brien", 'lager'], 'questions', 1)).toEqual([
      { query: "'o''brien'", matches: 150 },
    ]);
  });

  it('brings fewer matches of a word too frequent to find them all in about 1,000 rows', () => {
    // Unlisted, or matching at most 1,000 rows: every match up to 150, however old.
    expect(matchesOf(0, 1_000_000)).toBe(150);
    expect(matchesOf(0.001, 1_000_000)).toBe(150);
    expect(matchesOf(0.017, 20_000)).toBe(150);
    // Walking the newest rows finds k matches of frequency f in k / f rows: 1,000 × f of them, at least 10.
    expect(matchesOf(0.017, 1_000_000)).toBe(17);
    expect(matchesOf(0.002, 1_000_000)).toBe(10);
    expect(matchesOf(0.5, 1_000_000)).toBe(150);
  });
});
