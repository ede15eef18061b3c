import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * The list totals come from counters kept by triggers in the writing transaction (migration 0009), never from a
 * count per request. Many writers at once, on connections of their own, insert, move and delete questions, tags,
 * answers and users; afterwards every counter must equal the count(*) it stands for, and the API must say so.
 */

const WRITERS = 12;
const TRANSACTIONS_PER_WRITER = 30;

// Failures a transaction may meet because another one removed what it pointed at (or PostgreSQL chose it as the
// victim of a lock cycle of the pre-existing counter triggers): it rolls back whole, which the counters must survive.
const EXPECTED_FAILURES = new Set(['23503', '40P01', '23505']);

const pick = <T>(list: T[]): T | undefined => list[Math.floor(Math.random() * list.length)];

// Hundreds of racing transactions through every counter trigger: well over 30 s on a loaded 2-core machine.
describe('list totals under concurrent writes', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let sql: postgres.Sql;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    sql = postgres(runtime.env.DATABASE_URL!, { max: WRITERS, onnotice: () => {}, connect_timeout: 5 });
    await sql`INSERT INTO users (username, display_name) SELECT 'seed' || i, 'Seed ' || i FROM generate_series(1, 5) i`;
    await sql`INSERT INTO categories (name, slug) VALUES ('One', 'one'), ('Two', 'two'), ('Three', 'three')`;
    await sql`INSERT INTO tags (name, slug) SELECT 'tag' || i, 'tag' || i FROM generate_series(1, 6) i`;
  });

  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await app?.close();
    await runtime?.close();
  });

  /** One random write in its own transaction; returns whether it committed. */
  async function randomWrite(writer: number, n: number): Promise<boolean> {
    const [ids] = await sql<{ users: number[]; tags: number[]; categories: number[]; questions: number[] }[]>`
      SELECT (SELECT array_agg(id) FROM users) AS users, (SELECT array_agg(id) FROM tags) AS tags,
             (SELECT array_agg(id) FROM categories) AS categories,
             (SELECT array_agg(id) FROM (SELECT id FROM questions ORDER BY random() LIMIT 20) q) AS questions`;
    const users = ids!.users ?? [];
    const tags = ids!.tags ?? [];
    const categories = ids!.categories ?? [];
    const questions = ids!.questions ?? [];
    const kind = Math.floor(Math.random() * 10);
    try {
      await sql.begin(async (tx) => {
        if (kind <= 3 || questions.length === 0) {
          // A question with up to three tags (in id order, as the API writes them) and maybe a category.
          const category = Math.random() < 0.7 ? pick(categories)! : null;
          const [q] = await tx<{ id: number }[]>`
            INSERT INTO questions (title, slug, content, author_id, category_id, created_at, votes, views)
            VALUES (${`Question ${writer}-${n}`}, ${`q-${writer}-${n}`}, 'Body', ${pick(users)!}, ${category},
                    now() - ${`${Math.floor(Math.random() * 1000)} minutes`}::interval,
                    ${Math.floor(Math.random() * 10)}, ${Math.floor(Math.random() * 100)})
            RETURNING id`;
          const chosen = [...new Set([pick(tags), pick(tags), pick(tags)])].filter((t) => t !== undefined);
          if (Math.random() < 0.5) {
            for (const tag of chosen.sort((a, b) => a - b)) {
              await tx`INSERT INTO question_tags (question_id, tag_id) VALUES (${q!.id}, ${tag})`;
            }
          } else if (chosen.length > 0) {
            // All at once: one statement whose rows pair with each other (migration 0018's tag pairs).
            await tx`INSERT INTO question_tags ${tx(chosen.map((tag) => ({ question_id: q!.id, tag_id: tag })))}`;
          }
        } else if (kind <= 5) {
          const question = pick(questions)!;
          const [a] = await tx<{ id: number }[]>`
            INSERT INTO answers (question_id, author_id, content) VALUES (${question}, ${pick(users)!}, 'A')
            RETURNING id`;
          // Comments (0011's comment counters) and accepts (questions:accepted) race as well.
          if (Math.random() < 0.5) {
            await tx`INSERT INTO comments (answer_id, author_id, content) VALUES (${a!.id}, ${pick(users)!}, 'C')`;
          }
          if (Math.random() < 0.3) {
            await tx`UPDATE answers SET is_accepted = true WHERE id = ${a!.id}
                       AND NOT EXISTS (SELECT 1 FROM answers WHERE question_id = ${question} AND is_accepted)`;
          }
          if (Math.random() < 0.2) {
            await tx`DELETE FROM comments WHERE id = (SELECT id FROM comments ORDER BY random() LIMIT 1)`;
          }
          // Votes on answers move their authors' scores in each of the question's tags (migration 0018).
          if (Math.random() < 0.5) {
            await tx`INSERT INTO votes (user_id, answer_id, value)
                     SELECT ${pick(users)!}, id, ${Math.random() < 0.7 ? 1 : -1} FROM answers
                     WHERE id IN (SELECT id FROM answers ORDER BY random() LIMIT 2)`;
          }
        } else if (kind === 6) {
          await tx`DELETE FROM answers WHERE id = (SELECT id FROM answers ORDER BY random() LIMIT 1)`;
        } else if (kind === 7) {
          await tx`DELETE FROM questions WHERE id = ${pick(questions)!}`;
        } else if (kind === 8 && Math.random() < 0.5) {
          // A question retagged: one tag taken off, another put on.
          const question = pick(questions)!;
          await tx`DELETE FROM question_tags
                   WHERE (question_id, tag_id) = (SELECT question_id, tag_id FROM question_tags
                                                  WHERE question_id = ${question} LIMIT 1)`;
          await tx`INSERT INTO question_tags (question_id, tag_id) VALUES (${question}, ${pick(tags)!})
                   ON CONFLICT DO NOTHING`;
          if (Math.random() < 0.3) await tx`DELETE FROM votes WHERE id = (SELECT max(id) FROM votes)`;
        } else if (kind === 8) {
          await tx`UPDATE questions SET category_id = ${Math.random() < 0.3 ? null : pick(categories)!},
                     votes = votes + 1, views = views + 3
                   WHERE id = ${pick(questions)!}`;
        } else if (Math.random() < 0.5) {
          await tx`INSERT INTO users (username, display_name) VALUES (${`w${writer}-${n}`}, 'Writer')`;
          if (Math.random() < 0.3) await tx`DELETE FROM users WHERE username = ${`w${writer}-${n}`}`;
        } else {
          await tx`INSERT INTO tags (name, slug) VALUES (${`t${writer}-${n}`}, ${`t${writer}-${n}`})`;
          if (Math.random() < 0.3) await tx`DELETE FROM tags WHERE id = ${pick(tags)!}`;
        }
      });
      return true;
    } catch (err) {
      if (EXPECTED_FAILURES.has((err as { code?: string }).code ?? '')) return false;
      throw err;
    }
  }

  /** Rows of tag_pairs and tag_answerers that differ from a count over the posts (none where the truth is zero). */
  async function tagStatisticsMismatches() {
    const pairs = await sql`
      WITH truth AS (
        SELECT x.tag_id, y.tag_id AS other_tag_id, count(*)::int AS questions FROM question_tags x
        JOIN question_tags y ON y.question_id = x.question_id AND y.tag_id <> x.tag_id GROUP BY 1, 2
      )
      SELECT tag_id, other_tag_id, t.questions AS expected, c.questions AS counted
      FROM truth t FULL JOIN tag_pairs c USING (tag_id, other_tag_id)
      WHERE t.questions IS DISTINCT FROM c.questions`;
    const answerers = await sql`
      WITH truth AS (
        SELECT qt.tag_id, a.author_id, sum(a.votes)::int AS score, count(*)::int AS answers FROM question_tags qt
        JOIN answers a ON a.question_id = qt.question_id GROUP BY 1, 2
      )
      SELECT tag_id, author_id, t.score, t.answers, c.score AS counted_score, c.answers AS counted_answers
      FROM truth t FULL JOIN tag_answerers c USING (tag_id, author_id)
      WHERE (t.score, t.answers) IS DISTINCT FROM (c.score, c.answers)`;
    return { pairs: [...pairs], answerers: [...answerers] };
  }

  it('keeps every list total exact while writers race, and the API reports them', async () => {
    const committed = await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        let ok = 0;
        for (let n = 0; n < TRANSACTIONS_PER_WRITER; n++) if (await randomWrite(writer, n)) ok += 1;
        return ok;
      }),
    );
    // Most writes commit: the test exercises concurrency, not only rollbacks.
    expect(committed.reduce((a, b) => a + b, 0)).toBeGreaterThan((WRITERS * TRANSACTIONS_PER_WRITER) / 2);

    // Every scope's counter against the count it stands for (a scope with no row counts 0).
    const mismatches = await sql`
      WITH truth AS (
        SELECT 'questions' AS scope, count(*) AS n FROM questions
        UNION ALL SELECT 'questions:unanswered', count(*) FROM questions WHERE answers_count = 0
        UNION ALL SELECT 'users', count(*) FROM users
        UNION ALL SELECT 'tags', count(*) FROM tags
        UNION ALL SELECT 'category:' || category_id || ':unanswered', count(*) FROM questions
                  WHERE answers_count = 0 AND category_id IS NOT NULL GROUP BY category_id
        UNION ALL SELECT 'tag:' || qt.tag_id || ':unanswered', count(*) FROM question_tags qt
                  JOIN questions q ON q.id = qt.question_id WHERE q.answers_count = 0 GROUP BY qt.tag_id
        -- Migration 0011's scopes (issue 19's reads).
        UNION ALL SELECT 'answers', count(*) FROM answers
        UNION ALL SELECT 'comments', count(*) FROM comments
        UNION ALL SELECT 'questions:accepted', count(*) FROM questions WHERE has_accepted
        UNION ALL SELECT 'user:' || author_id || ':comments', count(*) FROM comments GROUP BY author_id
        UNION ALL SELECT agora_day_scope(created_at, 'questions'), count(*) FROM questions GROUP BY 1
        UNION ALL SELECT agora_day_scope(created_at, 'answers'), count(*) FROM answers GROUP BY 1
        UNION ALL SELECT agora_day_scope(created_at, 'comments'), count(*) FROM comments GROUP BY 1
        -- Migration 0026's: the unanswered questions per day, and every kind per month (deep pages by date).
        UNION ALL SELECT agora_day_scope(created_at, 'unanswered'), count(*) FROM questions
                  WHERE answers_count = 0 GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'unanswered'), count(*) FROM questions
                  WHERE answers_count = 0 GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'questions'), count(*) FROM questions GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'answers'), count(*) FROM answers GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'comments'), count(*) FROM comments GROUP BY 1
        -- Migration 0030's: a category's questions and its unanswered ones, and users, per day and month.
        UNION ALL SELECT agora_day_scope(created_at, 'category:' || category_id), count(*) FROM questions
                  WHERE category_id IS NOT NULL GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'category:' || category_id), count(*) FROM questions
                  WHERE category_id IS NOT NULL GROUP BY 1
        UNION ALL SELECT agora_day_scope(created_at, 'category-unanswered:' || category_id), count(*) FROM questions
                  WHERE category_id IS NOT NULL AND answers_count = 0 GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'category-unanswered:' || category_id), count(*) FROM questions
                  WHERE category_id IS NOT NULL AND answers_count = 0 GROUP BY 1
        UNION ALL SELECT agora_day_scope(created_at, 'users'), count(*) FROM users GROUP BY 1
        UNION ALL SELECT agora_month_scope(created_at, 'users'), count(*) FROM users GROUP BY 1
      )
      SELECT coalesce(t.scope, c.scope) AS scope, coalesce(t.n, 0)::int AS expected, coalesce(c.n, 0)::int AS counted
      FROM truth t FULL JOIN list_counts c ON c.scope = t.scope
      WHERE coalesce(t.n, 0) <> coalesce(c.n, 0)`;
    expect(mismatches).toEqual([]);

    // Migrations 0028, 0029, 0033 and 0036's value counts against the rows they count.
    const valueMismatches = await sql`
      WITH truth AS (
        SELECT r.list, k.level, k.bucket, k.block, count(*) AS n
        FROM (SELECT l.list, l.value, q.id FROM questions q, agora_question_value_lists(q.votes, q.views, q.category_id) l
              UNION ALL SELECT 'tag:' || tag_id || ':votes', votes, question_id FROM question_tags
              -- A tag's views are counted per value only (no id, no blocks).
              UNION ALL SELECT 'tag:' || tag_id || ':views', views, NULL FROM question_tags
              UNION ALL SELECT 'answers:votes', votes, id FROM answers
              UNION ALL SELECT 'comments:votes', votes, id FROM comments
              UNION ALL SELECT 'users:reputation', reputation, id FROM users
              UNION ALL SELECT 'users:name', agora_user_name_bucket(display_name), NULL FROM users) r,
             agora_value_count_keys(r.value, r.id) k
        GROUP BY 1, 2, 3, 4
      )
      SELECT coalesce(t.list, c.list) AS list, coalesce(t.n, 0)::int AS expected, coalesce(c.n, 0)::int AS counted
      FROM truth t FULL JOIN value_counts c
        ON (c.list, c.level, c.bucket, c.block) = (t.list, t.level, t.bucket, t.block)
      WHERE coalesce(t.n, 0) <> coalesce(c.n, 0)`;
    expect(valueMismatches).toEqual([]);

    // The per-tag and per-category totals of migration 0002, and the sort keys copied onto question_tags.
    const [checks] = await sql<{ tags: number; categories: number; keys: number; answers: number }[]>`
      SELECT
        (SELECT count(*) FROM tags t WHERE questions_count <> (SELECT count(*) FROM question_tags WHERE tag_id = t.id))::int AS tags,
        (SELECT count(*) FROM categories k WHERE questions_count <> (SELECT count(*) FROM questions WHERE category_id = k.id))::int AS categories,
        (SELECT count(*) FROM question_tags qt JOIN questions q ON q.id = qt.question_id
          WHERE (qt.created_at, qt.votes, qt.views, qt.answers_count) IS DISTINCT FROM (q.created_at, q.votes, q.views, q.answers_count))::int AS keys,
        (SELECT count(*) FROM answers)::int AS answers`;
    expect(checks).toMatchObject({ tags: 0, categories: 0, keys: 0 });
    expect(checks!.answers).toBeGreaterThan(0);

    // Migration 0018's tag pairs and tag answerers against what they stand for.
    expect(await tagStatisticsMismatches()).toEqual({ pairs: [], answerers: [] });
    const [exercised] = await sql<{ pairs: number; votes: number; scores: number }[]>`
      SELECT (SELECT count(*) FROM tag_pairs)::int AS pairs,
             (SELECT count(*) FROM votes WHERE answer_id IS NOT NULL)::int AS votes,
             (SELECT count(*) FROM tag_answerers WHERE score <> 0)::int AS scores`;
    expect(exercised!.pairs).toBeGreaterThan(0);
    expect(exercised!.votes).toBeGreaterThan(0);
    expect(exercised!.scores).toBeGreaterThan(0);

    const total = async (url: string) => (await app.inject(url)).json().data.pagination.total_items as number;
    const count = async (statement: postgres.PendingQuery<{ n: number }[]>) => (await statement)[0]!.n;
    expect(await total('/api/questions')).toBe(await count(sql`SELECT count(*)::int AS n FROM questions`));
    expect(await total('/api/questions?sort=unanswered')).toBe(
      await count(sql`SELECT count(*)::int AS n FROM questions WHERE answers_count = 0`),
    );
    expect(await total('/api/users')).toBe(await count(sql`SELECT count(*)::int AS n FROM users`));
    expect(await total('/api/tags')).toBe(await count(sql`SELECT count(*)::int AS n FROM tags`));
    const [tag] = await sql<{ id: number; slug: string }[]>`SELECT id, slug FROM tags WHERE slug = 'tag1'`;
    if (tag) {
      expect(await total(`/api/questions?tag=tag1&sort=unanswered`)).toBe(
        await count(sql`SELECT count(*)::int AS n FROM question_tags qt JOIN questions q ON q.id = qt.question_id
                        WHERE qt.tag_id = ${tag.id} AND q.answers_count = 0`),
      );
    }
    const [category] = await sql<{ id: number }[]>`SELECT id FROM categories WHERE slug = 'two'`;
    expect(await total(`/api/questions?category=${category!.id}&sort=unanswered`)).toBe(
      await count(
        sql`SELECT count(*)::int AS n FROM questions WHERE category_id = ${category!.id} AND answers_count = 0`,
      ),
    );
  });

  it('agora_recount() rebuilds the counters and sort keys after a load with triggers off', async () => {
    await sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      // A loader may write a batch of question_tags before the batch of its questions (foreign keys are off).
      const [{ id }] = (await tx`SELECT nextval(pg_get_serial_sequence('questions', 'id'))::int AS id`) as [
        { id: number },
      ];
      await tx`INSERT INTO question_tags (question_id, tag_id) VALUES (${id}, (SELECT min(id) FROM tags))`;
      await tx`INSERT INTO questions (id, title, slug, content, author_id, votes)
               VALUES (${id}, 'Bulk', 'bulk', 'B', (SELECT min(id) FROM users), 42)`;
      await tx`INSERT INTO users (username, display_name) VALUES ('bulk-user', 'Bulk')`;
      await tx`INSERT INTO question_tags (question_id, tag_id) VALUES (${id}, (SELECT max(id) FROM tags))`;
      await tx`INSERT INTO answers (question_id, author_id, content, votes)
               VALUES (${id}, (SELECT min(id) FROM users), 'Bulk answer', 3)`;
    });
    const missed = await tagStatisticsMismatches();
    expect(missed.pairs.length).toBeGreaterThan(0);
    expect(missed.answerers.length).toBeGreaterThan(0);
    const stale =
      await sql`SELECT 1 FROM question_tags qt JOIN questions q ON q.id = qt.question_id WHERE qt.votes <> q.votes`;
    expect(stale.length).toBe(1);
    await sql`SELECT agora_recount()`;
    const [after] = await sql<{ questions: boolean; users: boolean; keys: number }[]>`
      SELECT (SELECT n FROM list_counts WHERE scope = 'questions') = (SELECT count(*) FROM questions) AS questions,
             (SELECT n FROM list_counts WHERE scope = 'users') = (SELECT count(*) FROM users) AS users,
             (SELECT count(*) FROM question_tags qt JOIN questions q ON q.id = qt.question_id WHERE qt.votes <> q.votes)::int AS keys`;
    expect(after).toEqual({ questions: true, users: true, keys: 0 });
    expect(await tagStatisticsMismatches()).toEqual({ pairs: [], answerers: [] });
  });
});
