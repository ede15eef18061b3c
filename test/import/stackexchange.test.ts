import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { BEER_DUMP_DIR } from '../../shared/datasets.js';
import type { Database } from '../../shared/db/client.js';
import { dumpRows } from '../support/dump-rows.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

const DUMP = BEER_DUMP_DIR;

const rows = (file: string) => dumpRows(DUMP, file);

const posts = rows('Posts.xml');
const questions = posts.filter((p) => p.PostTypeId === '1');
const answers = posts.filter((p) => p.PostTypeId === '2');
const comments = rows('Comments.xml');
const tags = rows('Tags.xml');
const users = rows('Users.xml');
const badges = rows('Badges.xml');

async function snapshot(database: Database) {
  return database.query(sql`
    SELECT (SELECT json_agg(t ORDER BY id) FROM (SELECT id, title, slug, author_id, votes, views, answers_count, has_accepted, tag_names FROM questions) t) AS q,
           (SELECT json_agg(t ORDER BY id) FROM (SELECT id, question_id, votes, is_accepted FROM answers) t) AS a,
           (SELECT json_agg(t ORDER BY id) FROM (SELECT id, question_id, answer_id, author_id FROM comments) t) AS c,
           (SELECT json_agg(t ORDER BY id) FROM (SELECT id, username, reputation, questions_count, answers_count, badge_gold, badge_silver, badge_bronze FROM users) t) AS u,
           (SELECT json_agg(t ORDER BY id) FROM (SELECT id, name, slug, questions_count, description FROM tags) t) AS t,
           (SELECT count(*) FROM votes) AS votes, (SELECT count(*) FROM question_tags) AS question_tags`);
}

/** Posts whose search vector differs from what its trigger (migration 0017) would compute. */
async function wrongVectors(database: Database) {
  const [row] = await database.query(sql`
    SELECT (SELECT count(*) FROM questions WHERE search_vector IS DISTINCT FROM agora_question_vector(title, tag_names, content))::int AS q,
           (SELECT count(*) FROM answers WHERE search_vector IS DISTINCT FROM agora_answer_vector(content))::int AS a,
           (SELECT count(*) FROM questions WHERE search_vector IS NULL)::int AS missing`);
  return row;
}

describe('npm run import:stackexchange (beer dump)', () => {
  let runtime: TestRuntime;
  let first: unknown;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    const run = await runProcess('bin/import-stackexchange.ts', [DUMP], runtime.env);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`Imported ${users.length} users, ${questions.length} questions, ${answers.length} answers`),
    );
    first = await snapshot(runtime.database);
  }, 120_000);
  afterAll(async () => {
    await runtime.close();
  });

  it("keeps each question's answers_count equal to its answers and to the dump's AnswerCount", async () => {
    const db = await runtime.database.query<{ id: number; answers_count: number; actual: number }>(sql`
      SELECT q.id, q.answers_count, (SELECT count(*) FROM answers a WHERE a.question_id = q.id)::int AS actual FROM questions q`);
    const byId = new Map(db.map((r) => [r.id, r]));
    expect(db.length).toBe(questions.length);
    for (const q of questions) {
      const expected = answers.filter((a) => a.ParentId === q.Id).length;
      expect(Number(q.AnswerCount)).toBe(expected);
      expect(byId.get(Number(q.Id))).toEqual({ id: Number(q.Id), answers_count: expected, actual: expected });
    }
  });

  it("stores each post's comments, as many as the dump's CommentCount", async () => {
    const db = await runtime.database.query<{ post: number; n: number }>(sql`
      SELECT coalesce(question_id, answer_id) AS post, count(*)::int AS n FROM comments GROUP BY 1`);
    const byPost = new Map(db.map((r) => [r.post, r.n]));
    for (const p of [...questions, ...answers]) {
      expect(byPost.get(Number(p.Id)) ?? 0, `post ${p.Id}`).toBe(Number(p.CommentCount));
    }
    expect(db.reduce((n, r) => n + r.n, 0)).toBe(
      comments.filter((c) => posts.some((p) => p.Id === c.PostId && p.PostTypeId !== '4')).length,
    );
  });

  it("gives each tag the dump's Count of questions, and its wiki excerpt as description", async () => {
    const db = await runtime.database.query<{ name: string; questions_count: number; description: string }>(
      sql`SELECT name, questions_count, description FROM tags`,
    );
    const byName = new Map(db.map((r) => [r.name, r]));
    for (const t of tags) expect(byName.get(t.TagName!)?.questions_count, t.TagName).toBe(Number(t.Count));
    const withExcerpt = tags.find((t) => t.ExcerptPostId && posts.some((p) => p.Id === t.ExcerptPostId))!;
    const excerpt = posts
      .find((p) => p.Id === withExcerpt.ExcerptPostId)!
      .Body!.replace(/<[^>]*>/g, '')
      .trim();
    expect(byName.get(withExcerpt.TagName!)?.description).toBe(excerpt);
  });

  it('shows each post its dump Score as votes, made of vote rows that a recount reproduces', async () => {
    const db = await runtime.database.query<{ id: number; votes: number; rows: number }>(sql`
      SELECT id, votes, (SELECT coalesce(sum(value), 0) FROM votes v WHERE v.question_id = q.id)::int AS rows FROM questions q
      UNION ALL
      SELECT id, votes, (SELECT coalesce(sum(value), 0) FROM votes v WHERE v.answer_id = a.id)::int FROM answers a`);
    const byId = new Map(db.map((r) => [r.id, r]));
    for (const p of [...questions, ...answers]) {
      expect(byId.get(Number(p.Id)), `post ${p.Id}`).toEqual({
        id: Number(p.Id),
        votes: Number(p.Score),
        rows: Number(p.Score),
      });
    }
    await runtime.database.query(sql`SELECT agora_recount()`);
    expect(await snapshot(runtime.database)).toEqual(first);
  });

  it('marks accepted answers and has_accepted from AcceptedAnswerId', async () => {
    const accepted = await runtime.database.query<{ id: number }>(
      sql`SELECT id FROM answers WHERE is_accepted ORDER BY id`,
    );
    const expected = questions.filter((q) => q.AcceptedAnswerId).map((q) => Number(q.AcceptedAnswerId));
    expect(accepted.map((a) => a.id)).toEqual(expected.sort((a, b) => a - b));
    const [row] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM questions WHERE has_accepted`,
    );
    expect(row!.n).toBe(expected.length);
  });

  it('imports users with reputation, bio, avatar and badge counts by class', async () => {
    const db = await runtime.database.query<{
      id: number;
      reputation: number;
      bio: string;
      avatar: string;
      badges: number;
      display_name: string;
    }>(sql`
      SELECT id, reputation, bio, avatar, display_name, badge_gold + badge_silver + badge_bronze AS badges FROM users`);
    const byId = new Map(db.map((r) => [r.id, r]));
    for (const u of users) {
      const row = byId.get(Number(u.Id))!;
      expect(row.reputation).toBe(Number(u.Reputation));
      expect(row.display_name).toBe(u.DisplayName);
      expect(row.bio).toBe(u.AboutMe ?? '');
      expect(row.avatar).toEqual(u.ProfileImageUrl ?? expect.stringMatching(/^https:\/\//));
      expect(row.badges).toBe(badges.filter((b) => b.UserId === u.Id).length);
    }
    // The dump predates the Class attribute, so the name decides: Fanatic is gold, Good Answer silver.
    for (const [name, column] of [
      ['Fanatic', 'badge_gold'],
      ['Good Answer', 'badge_silver'],
    ] as const) {
      const holders = badges.filter((b) => b.Name === name).map((b) => Number(b.UserId));
      expect(holders.length).toBeGreaterThan(0);
      const rows = await runtime.database.query<{ n: number }>(
        sql`SELECT ${sql.raw(column)} AS n FROM users WHERE id IN ${holders}`,
      );
      for (const r of rows) expect(r.n).toBeGreaterThanOrEqual(1);
    }
  });

  it('gives imported posts the search vectors their triggers would (the load runs with triggers off)', async () => {
    expect(await wrongVectors(runtime.database)).toEqual({ q: 0, a: 0, missing: 0 });
  });

  it('is idempotent: a second import leaves the same rows and counts', async () => {
    const run = await runProcess('bin/import-stackexchange.ts', [DUMP], runtime.env);
    expect(run.code, run.output).toBe(0);
    expect(await snapshot(runtime.database)).toEqual(first);
    expect(await wrongVectors(runtime.database)).toEqual({ q: 0, a: 0, missing: 0 });
  }, 60_000);

  it('serves an imported question through the API with its answers and comments', async () => {
    const app = await buildQaApp(runtime);
    try {
      const q = questions.find((p) => Number(p.AnswerCount) > 1 && Number(p.CommentCount) > 0)!;
      const res = await app.inject(`/api/questions/${q.Id}?include=answers,comments`);
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data).toMatchObject({
        id: Number(q.Id),
        title: q.Title,
        content: q.Body,
        votes: Number(q.Score),
        answers_count: Number(q.AnswerCount),
      });
      expect(data.answers).toHaveLength(Number(q.AnswerCount));
      expect(data.comments).toHaveLength(Number(q.CommentCount));
      const bySlug = await app.inject(`/api/questions/${data.slug}`);
      expect(bySlug.statusCode).toBe(200);
      expect(bySlug.json().data.id).toBe(Number(q.Id));
    } finally {
      await app.close();
    }
  });

  it('refuses a database holding questions that are not in the dump, and changes nothing', async () => {
    await runtime.database.query(
      sql`INSERT INTO questions (id, title, slug, content, author_id) VALUES (900001, 'Local', 'local', 'x', 1)`,
    );
    const run = await runProcess('bin/import-stackexchange.ts', [DUMP], runtime.env);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/Refusing to import: the database holds 1 questions .*--reset/);
    await runtime.database.query(sql`DELETE FROM questions WHERE id = 900001`);
    await runtime.database.query(sql`SELECT agora_recount()`);
    expect(await snapshot(runtime.database)).toEqual(first);
    expect(await wrongVectors(runtime.database)).toEqual({ q: 0, a: 0, missing: 0 });
  }, 60_000);

  it('rejects a folder that is not a dump with exit 1', async () => {
    const run = await runProcess('bin/import-stackexchange.ts', ['/tmp'], runtime.env);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/no Posts\.xml/);
  }, 120_000);
});
