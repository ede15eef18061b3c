-- Recounts that seeds and imports wait for, computing the same rows from fewer passes (docs/benchmarks.md,
-- Seeding). agora_recount_values (migration 0029) expanded every row of the counted tables into its five keys before
-- grouping; the rows are now grouped once at the finest level (a value's rows per block of ids), and each coarser
-- level is summed from the values' counts.
CREATE OR REPLACE FUNCTION agora_recount_values() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM value_counts;
  INSERT INTO value_counts (list, level, bucket, block, n)
  WITH blocks AS MATERIALIZED (
    SELECT r.list, r.value, r.id >> 12 AS block, count(*) AS n
    FROM (SELECT l.list, l.value, q.id FROM questions q, agora_question_value_lists(q.votes, q.views, q.category_id) l
          UNION ALL SELECT 'answers:votes', votes, id FROM answers
          UNION ALL SELECT 'comments:votes', votes, id FROM comments
          UNION ALL SELECT 'users:reputation', reputation, id FROM users) r
    GROUP BY 1, 2, 3),
  vals AS MATERIALIZED (SELECT list, value, sum(n) AS n FROM blocks GROUP BY 1, 2)
  SELECT list, 4::smallint, value, block, n FROM blocks
  UNION ALL SELECT list, 3::smallint, value, 0, n FROM vals
  UNION ALL SELECT list, 2::smallint, value >> 8, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 1::smallint, value >> 16, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 0::smallint, value >> 24, 0, sum(n) FROM vals GROUP BY 1, 3
  ORDER BY 1, 2, 3, 4;
END $$;
--> statement-breakpoint
-- agora_recount_counters (migration 0017) counted each user's questions and answers with two subqueries per user;
-- the totals now come from one grouping of each table. Otherwise unchanged.
CREATE OR REPLACE FUNCTION agora_recount_counters() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE questions q SET
    answers_count = COALESCE(a.n, 0), has_accepted = COALESCE(a.accepted, false)
  FROM (SELECT q2.id, count(a2.id) AS n, bool_or(a2.is_accepted) AS accepted
        FROM questions q2 LEFT JOIN answers a2 ON a2.question_id = q2.id GROUP BY q2.id) a
  WHERE a.id = q.id AND (q.answers_count, q.has_accepted) IS DISTINCT FROM (COALESCE(a.n, 0), COALESCE(a.accepted, false));
  UPDATE questions q SET tag_names = COALESCE(t.names, '{}'),
    search_vector = agora_question_vector(q.title, COALESCE(t.names, '{}'), q.content)
  FROM (SELECT q2.id, array_agg(tg.name ORDER BY tg.name) FILTER (WHERE tg.id IS NOT NULL) AS names
        FROM questions q2 LEFT JOIN question_tags qt ON qt.question_id = q2.id LEFT JOIN tags tg ON tg.id = qt.tag_id
        GROUP BY q2.id) t
  WHERE t.id = q.id AND q.tag_names IS DISTINCT FROM COALESCE(t.names, '{}')
    AND NOT (q.tag_names @> COALESCE(t.names, '{}') AND q.tag_names <@ COALESCE(t.names, '{}'));
  UPDATE questions q SET votes = COALESCE(v.s, 0)
  FROM (SELECT q2.id, sum(v2.value) AS s FROM questions q2 LEFT JOIN votes v2 ON v2.question_id = q2.id GROUP BY q2.id) v
  WHERE v.id = q.id AND q.votes IS DISTINCT FROM COALESCE(v.s, 0);
  UPDATE answers a SET votes = COALESCE(v.s, 0)
  FROM (SELECT a2.id, sum(v2.value) AS s FROM answers a2 LEFT JOIN votes v2 ON v2.answer_id = a2.id GROUP BY a2.id) v
  WHERE v.id = a.id AND a.votes IS DISTINCT FROM COALESCE(v.s, 0);
  UPDATE users u SET questions_count = COALESCE(q.n, 0), answers_count = COALESCE(a.n, 0)
  FROM users u2
  LEFT JOIN (SELECT author_id, count(*) AS n FROM questions GROUP BY 1) q ON q.author_id = u2.id
  LEFT JOIN (SELECT author_id, count(*) AS n FROM answers GROUP BY 1) a ON a.author_id = u2.id
  WHERE u2.id = u.id AND (u.questions_count, u.answers_count) IS DISTINCT FROM (COALESCE(q.n, 0), COALESCE(a.n, 0));
  UPDATE tags t SET questions_count = COALESCE(c.n, 0)
  FROM (SELECT t2.id, count(qt.question_id) AS n FROM tags t2 LEFT JOIN question_tags qt ON qt.tag_id = t2.id GROUP BY t2.id) c
  WHERE c.id = t.id AND t.questions_count IS DISTINCT FROM COALESCE(c.n, 0);
  UPDATE categories k SET questions_count = COALESCE(c.n, 0)
  FROM (SELECT k2.id, count(q.id) AS n FROM categories k2 LEFT JOIN questions q ON q.category_id = k2.id GROUP BY k2.id) c
  WHERE c.id = k.id AND k.questions_count IS DISTINCT FROM COALESCE(c.n, 0);
END $$;
--> statement-breakpoint
-- The day counters (migrations 0011 and 0030) named each row's day before grouping; they are now grouped by day and
-- kind first, each group's scope named once. Otherwise unchanged.
CREATE OR REPLACE FUNCTION agora_recount_qa_reads() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE answers SET accepted_at = created_at WHERE is_accepted AND accepted_at IS NULL;
  DELETE FROM list_counts WHERE scope IN ('answers', 'comments', 'questions:accepted')
    OR scope LIKE 'user:%:comments' OR scope LIKE 'day:%';
  INSERT INTO list_counts (scope, n)
  SELECT 'answers', count(*) FROM answers
  UNION ALL SELECT 'comments', count(*) FROM comments
  UNION ALL SELECT 'questions:accepted', count(*) FROM questions WHERE has_accepted
  UNION ALL SELECT 'user:' || author_id || ':comments', count(*) FROM comments GROUP BY author_id
  UNION ALL SELECT agora_day_scope(d.day AT TIME ZONE 'UTC', d.kind), d.n FROM (
    SELECT 'questions' AS kind, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n FROM questions GROUP BY 2
    UNION ALL SELECT 'answers', (created_at AT TIME ZONE 'UTC')::date, count(*) FROM answers GROUP BY 2
    UNION ALL SELECT 'comments', (created_at AT TIME ZONE 'UTC')::date, count(*) FROM comments GROUP BY 2) d;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount_list_days() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM list_counts
  WHERE scope LIKE 'day:%:category:%' OR scope LIKE 'day:%:category-unanswered:%' OR scope LIKE 'day:%:users';
  INSERT INTO list_counts (scope, n)
  SELECT agora_day_scope(d.day AT TIME ZONE 'UTC', d.kind), d.n FROM (
    SELECT 'category:' || category_id AS kind, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n
    FROM questions WHERE category_id IS NOT NULL GROUP BY category_id, 2
    UNION ALL
    SELECT 'category-unanswered:' || category_id, (created_at AT TIME ZONE 'UTC')::date, count(*)
    FROM questions WHERE category_id IS NOT NULL AND answers_count = 0 GROUP BY category_id, 2
    UNION ALL
    SELECT 'users', (created_at AT TIME ZONE 'UTC')::date, count(*) FROM users GROUP BY 2) d;
END $$;
