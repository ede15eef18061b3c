import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchVectors } from '../../shared/db/bulk/search-vectors.js';
import { runBulk, type BulkSession } from '../../shared/db/bulk/session.js';
import { seedDatabase } from '../../shared/demo/seed.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * Search vectors are filled by a trigger (migration 0017) and, in bulk loads with triggers off, by the loader: the
 * seed computes them in Node (shared/db/bulk/search-vectors.ts). A wrong vector breaks search silently, so each
 * is compared with agora_question_vector / agora_answer_vector, the trigger's definition.
 */
const QUESTIONS: Array<[title: string, tags: string[], content: string]> = [
  // Stop words at the end of the title: the tags' positions follow its last lexeme, not its last word.
  ['What is it for?', ['sour-beer', 'ipa'], 'The wort is over-carbonated, and the wort is flat.'],
  ['How do I brew the wort without making it over-carbonated?', ['all-grain'], ''],
  ['', [], ''],
  ['Only stop words: is it a the of', [], 'and so on, and so forth'],
  ['Yeast! yeast? YEAST... (yeast)', ['yeast', 'water-chemistry'], 'yeast\n\nyeast\tyeast  yeast'],
  [
    "O'Brien's malt — 5.5% ABV, 60°C; see https://example.com/a-b?x=1",
    ['hops'],
    'Email me@example.com, e-mail.',
  ],
  ["Backslash \\ and quote ' in text", ['food-safety'], 'C:\\brew\\recipe.txt and "quoted" words'],
  ['Trailing hyphen- and -leading, 1.2.3 versions, -5 and 3.14', [], 'end with a stop word of'],
  // `<` may open a tag: PostgreSQL computes these.
  ['Is <b>bold</b> allowed?', ['html'], '<p>Paragraph with <a href="x y">a link</a></p>'],
];
const ANSWERS = [
  '',
  'the',
  'Keep an eye on the temperature; small changes make a big difference.',
  '<i>x</i> y',
];

async function inBulk<T>(runtime: TestRuntime, fn: (session: BulkSession) => Promise<T>): Promise<T> {
  return runBulk(runtime.database, {}, fn);
}

describe('search vectors', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('computes what agora_question_vector and agora_answer_vector give, on tricky text', async () => {
    await inBulk(runtime, async (session) => {
      const vectors = new SearchVectors(session);
      for (const [title, tags, content] of QUESTIONS) {
        const literal = await vectors.question(title, tags, content);
        const [row] = await session.query<{ same: boolean; ours: string; theirs: string }>(
          `SELECT $1::tsvector = agora_question_vector($2, $3::text[], $4) AS same,
                  $1::tsvector::text AS ours, agora_question_vector($2, $3::text[], $4)::text AS theirs`,
          [literal, title, `{${tags.map((t) => `"${t}"`).join(',')}}`, content],
        );
        expect(row!.ours, title).toBe(row!.theirs);
        expect(row!.same).toBe(true);
      }
      for (const content of ANSWERS) {
        const literal = await vectors.answer(content);
        const [row] = await session.query<{ ours: string; theirs: string }>(
          `SELECT $1::tsvector::text AS ours, agora_answer_vector($2)::text AS theirs`,
          [literal, content],
        );
        expect(row!.ours, content).toBe(row!.theirs);
      }
      // Only the texts holding `<` went to PostgreSQL whole; unknown chunks were asked for once per text.
      expect(vectors.fallbacks).toBe(2);
      expect(vectors.lookups).toBeLessThanOrEqual(QUESTIONS.length + ANSWERS.length);
      const asked = vectors.lookups;
      await vectors.question(...QUESTIONS[0]!);
      expect(vectors.lookups).toBe(asked);
    });
  });

  it('refuses text past tsvector limits rather than guessing how PostgreSQL clamps it', async () => {
    await inBulk(runtime, async (session) => {
      const vectors = new SearchVectors(session);
      const long = 'wort '.repeat(300);
      const literal = await vectors.answer(long);
      expect(vectors.fallbacks).toBe(1);
      const [row] = await session.query<{ same: boolean }>(
        'SELECT $1::tsvector = agora_answer_vector($2) AS same',
        [literal, long],
      );
      expect(row!.same).toBe(true);
    });
  });

  it('fills the vector by trigger on API-style writes, as the generated column did', async () => {
    const db = runtime.database;
    await db.query(sql`INSERT INTO users (id, username, display_name) VALUES (9001, 'vector-user', 'V')`);
    await db.query(sql`INSERT INTO tags (id, name, slug) VALUES (9001, 'sour-beer', 'sour-beer')`);
    await db.query(sql`INSERT INTO questions (id, title, slug, content, author_id)
                       VALUES (9001, 'Why is my wort sour?', 'why-sour', 'It tastes over-carbonated.', 9001)`);
    await db.query(sql`INSERT INTO answers (id, question_id, author_id, content)
                       VALUES (9001, 9001, 9001, 'Check the fermenter.')`);
    const stale = async () => {
      const [row] = await db.query<{ q: number; a: number; empty: number }>(sql`
        SELECT (SELECT count(*) FROM questions WHERE search_vector IS DISTINCT FROM agora_question_vector(title, tag_names, content))::int AS q,
               (SELECT count(*) FROM answers WHERE search_vector IS DISTINCT FROM agora_answer_vector(content))::int AS a,
               (SELECT count(*) FROM questions WHERE search_vector = ''::tsvector)::int AS empty`);
      return row;
    };
    expect(await stale()).toEqual({ q: 0, a: 0, empty: 0 });
    // Tags reach tag_names through question_tags' trigger, an UPDATE of questions: the vector follows.
    await db.query(sql`INSERT INTO question_tags (question_id, tag_id) VALUES (9001, 9001)`);
    await db.query(sql`UPDATE questions SET title = 'Why is my beer sour?' WHERE id = 9001`);
    await db.query(sql`UPDATE answers SET content = 'Check the airlock.' WHERE id = 9001`);
    expect(await stale()).toEqual({ q: 0, a: 0, empty: 0 });
    const [hit] = await db.query<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM questions WHERE search_vector @@ to_tsquery('english', 'sour-beer & beer')`);
    expect(hit!.n).toBe(1);
  });

  it('seeds vectors equal to the trigger definition on PostgreSQL (COPY path), a few thousand questions', async () => {
    const counts = await seedDatabase(runtime.database, { questions: 2000, reset: true });
    expect(counts.answers).toBeGreaterThan(2000);
    const [row] = await runtime.database.query<{ q: number; a: number; empty: number }>(sql`
      SELECT (SELECT count(*) FROM questions WHERE search_vector IS DISTINCT FROM agora_question_vector(title, tag_names, content))::int AS q,
             (SELECT count(*) FROM answers WHERE search_vector IS DISTINCT FROM agora_answer_vector(content))::int AS a,
             (SELECT count(*) FROM questions WHERE search_vector IS NULL OR search_vector = ''::tsvector)::int AS empty`);
    expect(row).toEqual({ q: 0, a: 0, empty: 0 });
  });
});
