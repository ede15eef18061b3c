import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relatedQuestionsRepository } from '../../shared/db/repositories/related-questions.js';
import { rows } from '../../shared/db/repositories/rows.js';
import {
  createTermRarity,
  lexemesOf,
  lookupOf,
  termMatches,
  type StatisticsRow,
  type Term,
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
      { query: "'o''brien'", matches: 150, inWindow: false },
    ]);
  });

  it('brings every match of a rare word, and a frequent one only its matches among the newest 1,000 rows', () => {
    // Unlisted, or matching at most 150 rows: every match, however old, by its own lookup.
    expect(lookupOf(0, 1_000_000)).toEqual({ matches: 150, inWindow: false });
    expect(lookupOf(0.0001, 1_000_000)).toEqual({ matches: 150, inWindow: false });
    expect(lookupOf(0.03, 5_000)).toEqual({ matches: 150, inWindow: false });
    // More: its matches among the newest 1,000 rows, about 1,000 × f of them (at most 150), at any size.
    expect(lookupOf(0.017, 20_000)).toEqual({ matches: 17, inWindow: true });
    expect(lookupOf(0.017, 1_000_000)).toEqual({ matches: 17, inWindow: true });
    expect(lookupOf(0.5, 1_000_000)).toEqual({ matches: 150, inWindow: true });
    // Too rare to find 10 in that window: its newest 10 by its own lookup.
    expect(lookupOf(0.002, 1_000_000)).toEqual({ matches: 10, inWindow: false });
  });
});

describe("the matches of a text's words", () => {
  let runtime: TestRuntime;
  let porterIds: number[];
  let newestIds: number[];
  let frequentOnly: number;

  beforeAll(async () => {
    runtime = await createTestRuntime({});
    const author = await addUser(runtime.database.db);
    // 1,100 questions, every one with "stout"; "porter" only in the 50 oldest, outside the newest 1,000 rows.
    await runtime.database.query(sql`
      INSERT INTO questions (title, content, slug, author_id)
      SELECT CASE WHEN g <= 50 THEN 'Stout porter ' ELSE 'Stout question ' END || g, 'Body ' || g, 'stout-' || g,
             ${author.id}
      FROM generate_series(1, 1100) g`);
    // A question made of frequent words only, for related questions looked up in the window alone.
    frequentOnly = (
      await addQuestion(runtime.database.db, {
        authorId: author.id,
        title: 'Stout question',
        content: 'Body',
      })
    ).id;
    await runtime.database.query(sql`ANALYZE questions`);
    const ids = await runtime.database.query<{ id: number; porter: boolean }>(
      sql`SELECT id, title LIKE '%porter%' AS porter FROM questions ORDER BY id DESC`,
    );
    porterIds = ids.filter((r) => r.porter).map((r) => Number(r.id));
    newestIds = ids.map((r) => Number(r.id));
  });

  afterAll(async () => {
    await runtime?.close();
  });

  const matches = async (terms: Term[], exclude = 0) =>
    (
      await runtime.database.query<{ ids: number[] }>(
        sql`SELECT ${termMatches('questions', terms, exclude)} AS ids`,
      )
    )[0]!.ids
      .map(Number)
      .sort((a, b) => b - a);

  it('marks a word matching more than 150 rows as looked up in the window of the newest rows', async () => {
    const rarity = createTermRarity((statement: SQL) => rows<StatisticsRow>(runtime.database.db, statement));
    expect(await rarity.rarest(['porter', 'stout'], 'questions', 8)).toEqual([
      { query: "'porter'", matches: 150, inWindow: false },
      { query: "'stout'", matches: 150, inWindow: true },
    ]);
  });

  it("finds a word's own matches however old, and a windowed word's only among the newest 1,000 rows", async () => {
    expect(await matches([{ query: "'porter'", matches: 150, inWindow: false }])).toEqual(porterIds);
    expect(await matches([{ query: "'porter'", matches: 150, inWindow: true }])).toEqual([]);
    // The windowed words share one walk: together as many as their matches add up to, the newest first.
    expect(
      await matches(
        [
          { query: "'stout'", matches: 3, inWindow: true },
          { query: "'question'", matches: 4, inWindow: true },
        ],
        newestIds[0],
      ),
    ).toEqual(newestIds.slice(1, 8));
    expect(
      await matches([
        { query: "'porter'", matches: 2, inWindow: false },
        { query: "'stout'", matches: 2, inWindow: true },
      ]),
    ).toEqual([...newestIds.slice(0, 2), ...porterIds.slice(0, 2)]);
    expect(await matches([])).toEqual([]);
  });

  it('answers related questions by frequent words the same on every call, planned per call or kept generic', async () => {
    // PostgreSQL plans a prepared statement for its first five calls' values, then may keep a generic plan.
    const related = relatedQuestionsRepository(runtime.database.db);
    const source = frequentOnly;
    const answers = [];
    for (let call = 0; call < 8; call++)
      answers.push((await related.related(source, 5))!.map((q) => [q.id, q.score]));
    expect(answers[0]).toHaveLength(5);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    const window = new Set(newestIds.slice(0, 1000));
    for (const [id] of answers[0]!) {
      expect(window.has(id!)).toBe(true);
      expect(id).not.toBe(source);
    }
  });
});
