import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** A digest of every seeded row (minus generated columns), to compare two runs. */
async function fingerprint(database: Database): Promise<Record<string, string>> {
  const tables: Record<string, string> = {
    users:
      'id, username, display_name, avatar, bio, reputation, badge_gold, badge_silver, badge_bronze, created_at',
    categories: 'id, name, slug, description, icon',
    tags: 'id, name, slug, description',
    questions:
      'id, title, slug, content, author_id, category_id, votes, views, answers_count, has_accepted, tag_names, created_at',
    question_tags: 'question_id, tag_id',
    answers: 'id, question_id, author_id, content, votes, is_accepted, created_at',
    comments: 'id, question_id, answer_id, author_id, content, votes, created_at',
    votes: 'user_id, question_id, answer_id, value, created_at',
  };
  const out: Record<string, string> = {};
  for (const [table, columns] of Object.entries(tables)) {
    const [row] = await database.query<{ digest: string }>(
      sql.raw(
        `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM (SELECT ${columns} FROM ${table}) t`,
      ),
    );
    out[table] = row!.digest;
  }
  return out;
}

/** Every maintained counter, as stored. */
async function counters(database: Database) {
  return database.query(sql`
    SELECT (SELECT json_agg(json_build_array(id, votes, answers_count, has_accepted, tag_names) ORDER BY id) FROM questions) AS q,
           (SELECT json_agg(json_build_array(id, votes) ORDER BY id) FROM answers) AS a,
           (SELECT json_agg(json_build_array(id, questions_count, answers_count) ORDER BY id) FROM users) AS u,
           (SELECT json_agg(json_build_array(id, questions_count) ORDER BY id) FROM tags) AS t,
           (SELECT json_agg(json_build_array(id, questions_count) ORDER BY id) FROM categories) AS c`);
}

describe('npm run seed', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let first: Record<string, string>;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('seeds a realistic dataset on PostgreSQL and prints a summary', async () => {
    const run = await runProcess('bin/seed.ts', ['--questions', '120'], runtime.env);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(
      /Seeded \d+ users, 8 categories, \d+ tags, 120 questions, \d+ answers, \d+ comments, \d+ votes in [\d.]+ s/,
    );
    // Not a terminal here: plain progress lines (rows per table, rate, share and ETA of the questions).
    expect(run.output).toMatch(/^seeding 100% · ETA \d+ s · [\d,]+ rows\/s · .*questions 120/m);

    const [counts] = await runtime.database.query<Record<string, number>>(sql`
      SELECT (SELECT count(*) FROM questions)::int AS questions,
             (SELECT count(*) FROM answers)::int AS answers,
             (SELECT count(*) FROM answers WHERE is_accepted)::int AS accepted,
             (SELECT count(*) FROM questions WHERE answers_count = 0)::int AS unanswered,
             (SELECT count(*) FROM comments WHERE question_id IS NOT NULL)::int AS question_comments,
             (SELECT count(*) FROM comments WHERE answer_id IS NOT NULL)::int AS answer_comments,
             (SELECT count(*) FROM votes)::int AS votes,
             (SELECT count(*) FROM users WHERE bio <> '' AND avatar LIKE 'https://%')::int AS profiled_users,
             (SELECT count(*) FROM categories WHERE icon LIKE 'fa-%')::int AS iconic_categories,
             (SELECT count(*) FROM tags WHERE description <> '')::int AS described_tags,
             (SELECT count(DISTINCT slug) FROM questions)::int AS distinct_slugs`);
    expect(counts!.questions).toBe(120);
    expect(counts!.distinct_slugs).toBe(120);
    expect(counts!.answers).toBeGreaterThan(0);
    expect(counts!.accepted).toBeGreaterThan(0);
    expect(counts!.unanswered).toBeGreaterThan(0);
    expect(counts!.question_comments).toBeGreaterThan(0);
    expect(counts!.answer_comments).toBeGreaterThan(0);
    expect(counts!.votes).toBeGreaterThan(0);
    expect(counts!.profiled_users).toBeGreaterThan(0);
    expect(counts!.iconic_categories).toBe(8);
    expect(counts!.described_tags).toBeGreaterThan(0);

    // The planner's statistics come with the rows (ANALYZE in the load's transaction), not at autovacuum's next pass.
    const analyzed = await runtime.database.query<{ tablename: string }>(sql`
      SELECT DISTINCT tablename FROM pg_stats
      WHERE schemaname = current_schema() AND tablename IN ('questions', 'answers', 'users', 'votes')
      ORDER BY tablename`);
    expect(analyzed.map((r) => r.tablename)).toEqual(['answers', 'questions', 'users', 'votes']);
  });

  it('leaves counters equal to a recount from the rows, and vote rows summing to post votes', async () => {
    const before = await counters(runtime.database);
    const [sums] = await runtime.database.query<{
      bad_questions: number;
      bad_answers: number;
      self_votes: number;
    }>(sql`
      SELECT (SELECT count(*) FROM questions q
              WHERE q.votes <> (SELECT coalesce(sum(value), 0) FROM votes v WHERE v.question_id = q.id))::int AS bad_questions,
             (SELECT count(*) FROM answers a
              WHERE a.votes <> (SELECT coalesce(sum(value), 0) FROM votes v WHERE v.answer_id = a.id))::int AS bad_answers,
             (SELECT count(*) FROM votes v JOIN questions q ON q.id = v.question_id WHERE v.user_id = q.author_id)::int AS self_votes`);
    expect(sums).toEqual({ bad_questions: 0, bad_answers: 0, self_votes: 0 });
    await runtime.database.query(sql`SELECT agora_recount()`);
    expect(await counters(runtime.database)).toEqual(before);
    first = await fingerprint(runtime.database);
  });

  it('refuses a non-empty database without --reset, and leaves it untouched', async () => {
    const run = await runProcess('bin/seed.ts', ['--questions', '10'], runtime.env);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/Refusing to seed: the database already holds Q&A data .*--reset/);
    expect(await fingerprint(runtime.database)).toEqual(first);
  });

  it('rejects a bad --questions value with exit 1', async () => {
    const run = await runProcess('bin/seed.ts', ['--questions', 'lots'], runtime.env);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/--questions must be an integer/);
  });

  it('is deterministic: --reset with the same N gives the same rows, ids continue after the seeded ones', async () => {
    // A key deleted by --reset: its id is not given to the next key (rate-limit counters are kept per key id).
    const [user] = await runtime.database.query<{ id: number }>(sql`SELECT min(id)::int AS id FROM users`);
    const [deleted] = await runtime.database.query<{ id: number }>(
      sql`INSERT INTO api_keys (user_id, hash, prefix, plan, scopes)
          VALUES (${user!.id}, 'reset-test', 'agk_rst', 'authenticated', '{}') RETURNING id`,
    );
    // Nor a webhook subscription's: its deliveries (subject webhook:<id>) outlive it, and a new subscription under
    // that id would list them and could redeliver them, another user's events to another user's URL.
    const subscription = (
      userId: number,
    ) => sql`INSERT INTO webhook_subscriptions (user_id, url, events, since_seq)
          VALUES (${userId}, 'http://receiver.example/hook', '{question.created}', 0) RETURNING id`;
    const [deletedSubscription] = await runtime.database.query<{ id: number }>(subscription(user!.id));
    const run = await runProcess('bin/seed.ts', ['--questions', '120', '--reset'], runtime.env);
    expect(run.code, run.output).toBe(0);
    expect(await fingerprint(runtime.database)).toEqual(first);
    const [next] = await runtime.database.query<{ id: number }>(
      sql`INSERT INTO tags (name, slug) VALUES ('after-seed', 'after-seed') RETURNING id`,
    );
    const [max] = await runtime.database.query<{ max: number }>(
      sql`SELECT max(id)::int AS max FROM tags WHERE name <> 'after-seed'`,
    );
    expect(next!.id).toBe(max!.max + 1);
    const [key] = await runtime.database.query<{ id: number }>(
      sql`INSERT INTO api_keys (user_id, hash, prefix, plan, scopes)
          VALUES (${user!.id}, 'reset-test-2', 'agk_rs2', 'authenticated', '{}') RETURNING id`,
    );
    expect(key!.id).toBeGreaterThan(deleted!.id);
    const [newSubscription] = await runtime.database.query<{ id: number }>(subscription(user!.id));
    expect(newSubscription!.id).toBeGreaterThan(deletedSubscription!.id);
  });

  it('serves the seeded data through the API', async () => {
    const app = await buildQaApp(runtime);
    try {
      const res = await app.inject('/api/categories');
      expect(res.statusCode).toBe(200);
      const total = res
        .json()
        .data.categories.reduce((n: number, c: { questions_count: number }) => n + c.questions_count, 0);
      expect(total).toBe(120);
    } finally {
      await app.close();
    }
  });

  it('seeds the embedded PGlite database when DATABASE_URL is unset', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-seed-'));
    try {
      const { DATABASE_URL: _unused, ...env } = runtime.env;
      const run = await runProcess('bin/seed.ts', ['--questions', '25'], {
        ...env,
        DATABASE_URL: '',
        DATA_DIR: dataDir,
      });
      expect(run.code, run.output).toBe(0);
      expect(run.stdout).toMatch(/embedded PGlite/);
      const database = await openDatabase({ dataDir });
      try {
        const [row] = await database.query<{ questions: number; bad: number; bad_vectors: number }>(sql`
          SELECT (SELECT count(*) FROM questions)::int AS questions,
                 (SELECT count(*) FROM questions q
                  WHERE q.answers_count <> (SELECT count(*) FROM answers a WHERE a.question_id = q.id))::int AS bad,
                 -- The INSERT path's tsvector column (no COPY on the embedded database): vectors as the trigger's.
                 ((SELECT count(*) FROM questions
                   WHERE search_vector IS DISTINCT FROM agora_question_vector(title, tag_names, content)) +
                  (SELECT count(*) FROM answers
                   WHERE search_vector IS DISTINCT FROM agora_answer_vector(content)))::int AS bad_vectors`);
        expect(row).toEqual({ questions: 25, bad: 0, bad_vectors: 0 });
      } finally {
        await database.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
