import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../shared/db/repositories/rows.js';
import { createTermRarity, lexemesOf } from '../../shared/db/repositories/word-lookup.js';
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
    let reads = 0;
    const rarity = createTermRarity(async (statement: SQL) => {
      reads++;
      return rows(db, statement);
    });
    const [text] = await rows<{ lexemes: string[] }>(
      db,
      sql`SELECT ${lexemesOf(sql`${'Lager wort with kveik, then a sparge'}::text`)} AS lexemes`,
    );
    expect(text!.lexemes).toEqual(['lager', 'wort', 'kveik', 'sparg']);
    expect(await rarity.rarest(text!.lexemes, 'questions', 3)).toEqual(["'kveik'", "'sparg'", "'wort'"]);
    expect(await rarity.rarest(text!.lexemes, 'questions', 8)).toEqual([
      "'kveik'",
      "'sparg'",
      "'wort'",
      "'lager'",
    ]);
    expect(reads).toBe(1);
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
    expect(await rarity.rarest(["o'brien", 'lager'], 'questions', 1)).toEqual(["'o''brien'"]);
  });
});
