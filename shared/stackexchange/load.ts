import type { BulkSession } from '../db/bulk/session.js';

/**
 * Stage two: from the staged dump to our tables, with set-based upserts keyed by the dump's own ids, so a
 * second run updates rows in place instead of duplicating them. Runs with triggers off; the caller recounts.
 * Decisions (ids, HTML, votes, owners) are explained in docs/import.md.
 */
export interface LoadCounts {
  users: number;
  placeholderUsers: number;
  voterUsers: number;
  questions: number;
  answers: number;
  comments: number;
  tags: number;
  votes: number;
  skippedAnswers: number;
  skippedComments: number;
  skippedVotes: number;
  links: number;
  skippedLinks: number;
}

const one = async (session: BulkSession, text: string): Promise<number> => {
  const [row] = await session.query<{ n: number }>(text);
  return Number(row?.n ?? 0);
};

const PREFIX_VOTER = 'se-voter-';
const PREFIX_DELETED = 'deleted-';

export async function loadStaged(
  session: BulkSession,
  syncSequences: () => Promise<void>,
): Promise<LoadCounts> {
  // Which staged posts become ours: every question, and answers whose question is in the dump.
  await session.query(`CREATE TEMP TABLE se_questions ON COMMIT DROP AS
    SELECT * FROM se_posts WHERE type = 1`);
  await session.query(`CREATE TEMP TABLE se_answers ON COMMIT DROP AS
    SELECT a.* FROM se_posts a JOIN se_questions q ON q.id = a.parent WHERE a.type = 2`);
  await session.query('CREATE UNIQUE INDEX ON se_questions (id)');
  await session.query('CREATE UNIQUE INDEX ON se_answers (id)');

  // Users keep their dump ids. Display names are not unique on Stack Exchange; usernames must be, so a name
  // shared by several users (or empty) takes the user's id as a suffix.
  const users = await one(
    session,
    `WITH badges AS (
       SELECT user_id, count(*) FILTER (WHERE class = 1) AS gold, count(*) FILTER (WHERE class = 2) AS silver,
              count(*) FILTER (WHERE class = 3) AS bronze
       FROM se_badges GROUP BY user_id),
     named AS (
       SELECT u.*, count(*) OVER (PARTITION BY u.username_base) AS same FROM se_users u),
     posts AS (
       SELECT owner, count(*) FILTER (WHERE kind = 1) AS questions, count(*) FILTER (WHERE kind = 2) AS answers
       FROM (SELECT owner, 1 AS kind FROM se_questions UNION ALL SELECT owner, 2 FROM se_answers) p GROUP BY owner),
     upserted AS (
       INSERT INTO users (id, username, display_name, avatar, bio, reputation, badge_gold, badge_silver, badge_bronze,
                          questions_count, answers_count, created_at)
       SELECT n.id,
              CASE WHEN n.username_base = '' OR n.same > 1 THEN concat_ws('-', nullif(n.username_base, ''), 'user', n.id)
                   ELSE n.username_base END,
              n.display_name, n.avatar, n.about, n.reputation,
              coalesce(b.gold, 0), coalesce(b.silver, 0), coalesce(b.bronze, 0),
              coalesce(p.questions, 0), coalesce(p.answers, 0), coalesce(n.created, now())
       FROM named n LEFT JOIN badges b ON b.user_id = n.id LEFT JOIN posts p ON p.owner = n.id
       ON CONFLICT (id) DO UPDATE SET username = EXCLUDED.username, display_name = EXCLUDED.display_name,
         avatar = EXCLUDED.avatar, bio = EXCLUDED.bio, reputation = EXCLUDED.reputation,
         badge_gold = EXCLUDED.badge_gold, badge_silver = EXCLUDED.badge_silver, badge_bronze = EXCLUDED.badge_bronze,
         questions_count = EXCLUDED.questions_count, answers_count = EXCLUDED.answers_count,
         created_at = EXCLUDED.created_at
       RETURNING 1)
     SELECT count(*) AS n FROM upserted`,
  );
  // New rows below take ids from the sequences, which must first move past the dump's ids.
  await syncSequences();

  // Posts and comments whose owner was deleted (no OwnerUserId, or one missing from Users.xml).
  const placeholderUsers = await one(
    session,
    `WITH orphans AS (
       SELECT orphan_key, orphan_name, created FROM se_questions p WHERE NOT EXISTS (SELECT 1 FROM se_users u WHERE u.id = p.owner)
       UNION ALL
       SELECT orphan_key, orphan_name, created FROM se_answers p WHERE NOT EXISTS (SELECT 1 FROM se_users u WHERE u.id = p.owner)
       UNION ALL
       SELECT orphan_key, orphan_name, created FROM se_comments c WHERE NOT EXISTS (SELECT 1 FROM se_users u WHERE u.id = c.owner)),
     inserted AS (
       INSERT INTO users (username, display_name, created_at)
       SELECT '${PREFIX_DELETED}' || orphan_key, min(orphan_name), coalesce(min(created), now())
       FROM orphans GROUP BY orphan_key
       ON CONFLICT (username) DO NOTHING RETURNING 1)
     SELECT (SELECT count(DISTINCT orphan_key) FROM orphans) AS n`,
  );
  const author = (alias: string) =>
    `coalesce((SELECT su.id FROM se_users su WHERE su.id = ${alias}.owner),
              (SELECT u.id FROM users u WHERE u.username = '${PREFIX_DELETED}' || ${alias}.orphan_key))`;

  // Tags: the dump's ids; descriptions from the tag-wiki excerpts (plain text).
  const tags = await one(
    session,
    `WITH upserted AS (
       INSERT INTO tags (id, name, slug, description)
       SELECT t.id, t.name, t.slug, coalesce(trim(regexp_replace(e.body, '<[^>]*>', '', 'g')), '')
       FROM se_tags t LEFT JOIN se_posts e ON e.id = t.excerpt_post AND e.type = 4
       WHERE t.id IS NOT NULL
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, slug = EXCLUDED.slug, description = EXCLUDED.description
       RETURNING 1)
     SELECT count(*) AS n FROM upserted`,
  );
  await syncSequences();
  await session.query(
    `INSERT INTO tags (name, slug) SELECT name, slug FROM se_tags WHERE id IS NULL ON CONFLICT (name) DO NOTHING`,
  );

  // Questions: the dump's ids; slugs from titles, the first of equal titles keeps the bare slug. The counters
  // (answers, acceptance and the accepted answer, tags, votes: the vote rows below sum to the score) are written with the row, as
  // agora_recount() would compute them: an UPDATE afterwards would rewrite every row and its search vector. With
  // triggers off the search vector is computed here too, by the function its trigger uses (migration 0017).
  const questions = await one(
    session,
    `WITH slugged AS (
       SELECT q.*, row_number() OVER (PARTITION BY q.slug_base ORDER BY q.id) AS nth FROM se_questions q),
     answered AS (
       SELECT a.parent AS id, count(*) AS n, max(a.id) FILTER (WHERE q.accepted = a.id) AS accepted_id,
              max(a.created) FILTER (WHERE q.accepted = a.id) AS accepted_at
       FROM se_answers a JOIN se_questions q ON q.id = a.parent GROUP BY a.parent),
     upserted AS (
       INSERT INTO questions (id, title, slug, content, author_id, votes, views, answers_count, has_accepted,
                              accepted_answer_id, accepted_at, tag_names, created_at, updated_at, search_vector)
       SELECT q.id, q.title,
              CASE WHEN q.slug_base = '' THEN 'question-' || q.id WHEN q.nth > 1 THEN q.slug_base || '-' || q.id ELSE q.slug_base END,
              q.body, ${author('q')}, q.score, q.views, coalesce(c.n, 0), c.accepted_id IS NOT NULL,
              c.accepted_id, c.accepted_at, tn.names, q.created, q.edited, agora_question_vector(q.title, tn.names, q.body)
       FROM slugged q LEFT JOIN answered c ON c.id = q.id
       CROSS JOIN LATERAL (SELECT coalesce(array_agg(DISTINCT t.name ORDER BY t.name), '{}') AS names
                           FROM unnest(string_to_array(q.tags, '|')) AS n(name) JOIN tags t ON t.name = n.name) tn
       ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, slug = EXCLUDED.slug, content = EXCLUDED.content,
         author_id = EXCLUDED.author_id, votes = EXCLUDED.votes, views = EXCLUDED.views,
         answers_count = EXCLUDED.answers_count, has_accepted = EXCLUDED.has_accepted,
         accepted_answer_id = EXCLUDED.accepted_answer_id, accepted_at = EXCLUDED.accepted_at, tag_names = EXCLUDED.tag_names,
         created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, search_vector = EXCLUDED.search_vector
       RETURNING 1)
     SELECT count(*) AS n FROM upserted`,
  );
  await session.query(`DELETE FROM question_tags WHERE question_id IN (SELECT id FROM se_questions)`);
  await session.query(
    `INSERT INTO question_tags (question_id, tag_id, created_at, votes, views, answers_count)
     SELECT DISTINCT ON (q.id, t.id) q.id, t.id, q.created_at, q.votes, q.views, q.answers_count
     FROM se_questions s JOIN questions q ON q.id = s.id
     CROSS JOIN LATERAL unnest(string_to_array(s.tags, '|')) AS n(name) JOIN tags t ON t.name = n.name
     WHERE s.tags <> ''`,
  );

  // Answers: accepted when their question names them; search vectors computed as for the questions. Clear old
  // flags first: the one-accepted-answer index is checked row by row, and a newer dump may have moved the acceptance.
  await session.query(
    `UPDATE answers SET is_accepted = false WHERE is_accepted AND question_id IN (SELECT id FROM se_questions)`,
  );
  const answers = await one(
    session,
    `WITH upserted AS (
       INSERT INTO answers (id, question_id, author_id, content, votes, is_accepted, accepted_at, created_at, updated_at,
                            search_vector)
       SELECT a.id, a.parent, ${author('a')}, a.body, a.score, q.accepted IS NOT DISTINCT FROM a.id,
              CASE WHEN q.accepted = a.id THEN a.created END, a.created, a.edited, agora_answer_vector(a.body)
       FROM se_answers a JOIN se_questions q ON q.id = a.parent
       ON CONFLICT (id) DO UPDATE SET question_id = EXCLUDED.question_id, author_id = EXCLUDED.author_id,
         content = EXCLUDED.content, votes = EXCLUDED.votes, is_accepted = EXCLUDED.is_accepted,
         created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, search_vector = EXCLUDED.search_vector
       RETURNING 1)
     SELECT count(*) AS n FROM upserted`,
  );
  const skippedAnswers = await one(
    session,
    `SELECT (SELECT count(*) FROM se_posts WHERE type = 2) - (SELECT count(*) FROM se_answers) AS n`,
  );

  const comments = await one(
    session,
    `WITH upserted AS (
       INSERT INTO comments (id, question_id, answer_id, author_id, content, votes, created_at)
       SELECT c.id, q.id, a.id, ${author('c')}, c.text, c.score, c.created
       FROM se_comments c LEFT JOIN se_questions q ON q.id = c.post_id LEFT JOIN se_answers a ON a.id = c.post_id
       WHERE q.id IS NOT NULL OR a.id IS NOT NULL
       ON CONFLICT (id) DO UPDATE SET question_id = EXCLUDED.question_id, answer_id = EXCLUDED.answer_id,
         author_id = EXCLUDED.author_id, content = EXCLUDED.content, votes = EXCLUDED.votes, created_at = EXCLUDED.created_at
       RETURNING 1)
     SELECT count(*) AS n FROM upserted`,
  );
  const skippedComments = await one(session, `SELECT (SELECT count(*) FROM se_comments) - ${comments} AS n`);

  // Votes. The dump does not say who voted, and our model is one vote per user per post, so each post gets
  // anonymous voter accounts casting rows that sum to its Score (what the site shows) while keeping the
  // dump's number of down-votes; agora_recount() then reproduces Score from the rows.
  await session.query(`CREATE TEMP TABLE se_tally ON COMMIT DROP AS
    SELECT p.id, p.type, p.created, greatest(p.score + coalesce(d.n, 0), 0) AS up,
           greatest(p.score + coalesce(d.n, 0), 0) - p.score AS down
    FROM (SELECT id, 1 AS type, score, created FROM se_questions UNION ALL SELECT id, 2, score, created FROM se_answers) p
    LEFT JOIN (SELECT post_id, count(*) AS n FROM se_votes WHERE type = 3 GROUP BY post_id) d ON d.post_id = p.id`);
  const voterUsers = await one(session, `SELECT coalesce(max(up + down), 0) AS n FROM se_tally`);
  await session.query(
    `INSERT INTO users (username, display_name, created_at)
     SELECT '${PREFIX_VOTER}' || k, 'Anonymous voter ' || k, coalesce((SELECT min(created) FROM se_posts), now())
     FROM generate_series(1, ${voterUsers}) AS k ON CONFLICT (username) DO NOTHING`,
  );
  await session.query(`CREATE TEMP TABLE se_voters ON COMMIT DROP AS
    SELECT k, (SELECT id FROM users WHERE username = '${PREFIX_VOTER}' || k) AS user_id FROM generate_series(1, ${voterUsers}) AS k`);
  await session.query('CREATE UNIQUE INDEX ON se_voters (k)');
  await session.query(
    `DELETE FROM votes v USING users u WHERE u.id = v.user_id AND u.username LIKE '${PREFIX_VOTER}%'
       AND (v.question_id IN (SELECT id FROM se_questions) OR v.answer_id IN (SELECT id FROM se_answers))`,
  );
  const votes = await one(
    session,
    `WITH inserted AS (
       INSERT INTO votes (user_id, question_id, answer_id, value, created_at)
       SELECT v.user_id, CASE WHEN t.type = 1 THEN t.id END, CASE WHEN t.type = 2 THEN t.id END,
              CASE WHEN s.k <= t.up THEN 1 ELSE -1 END, t.created
       FROM se_tally t CROSS JOIN LATERAL generate_series(1, t.up + t.down) AS s(k) JOIN se_voters v ON v.k = s.k
       RETURNING 1)
     SELECT count(*) AS n FROM inserted`,
  );
  const skippedVotes = await one(
    session,
    `SELECT count(*) AS n FROM se_votes v
     WHERE NOT EXISTS (SELECT 1 FROM se_questions q WHERE q.id = v.post_id) AND NOT EXISTS (SELECT 1 FROM se_answers a WHERE a.id = v.post_id)`,
  );

  // Links between questions of the dump (PostLinks.xml), as 'import' rows of post_links: a pair linked several
  // times is one row, a duplicate if any of its links says so. Links to posts that are not questions here are
  // skipped. Re-importing replaces the imported links; links found in bodies written through the API stay.
  await session.query(`DELETE FROM post_links WHERE source = 'import'`);
  const links = await one(
    session,
    `WITH inserted AS (
       INSERT INTO post_links (question_id, related_question_id, source, kind, created_at)
       SELECT l.post_id, l.related_id, 'import', CASE WHEN bool_or(l.type = 3) THEN 'duplicate' ELSE 'link' END,
              coalesce(min(l.created), now())
       FROM se_links l
       JOIN se_questions a ON a.id = l.post_id JOIN se_questions b ON b.id = l.related_id
       WHERE l.post_id <> l.related_id
       GROUP BY l.post_id, l.related_id
       RETURNING 1)
     SELECT count(*) AS n FROM inserted`,
  );
  const skippedLinks = await one(
    session,
    `SELECT count(*) AS n FROM se_links l
     WHERE l.post_id = l.related_id OR NOT EXISTS (SELECT 1 FROM se_questions q WHERE q.id = l.post_id)
       OR NOT EXISTS (SELECT 1 FROM se_questions q WHERE q.id = l.related_id)`,
  );

  return {
    users,
    placeholderUsers,
    voterUsers,
    questions,
    answers,
    comments,
    tags,
    votes,
    skippedAnswers,
    skippedComments,
    skippedVotes,
    links,
    skippedLinks,
  };
}
