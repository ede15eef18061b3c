-- Deep pages of the lists sorted by a number (questions by votes and by views, all of them or a category's; users by
-- reputation) start their walk near the row that holds their offset (shared/db/repositories/seek.ts, valueAnchor),
-- found from counts kept in the writing statement, as 0026's day counters are for the lists by date.
--
-- A list's rows are counted at five levels, each a refinement of the one before and each contiguous in the list's
-- order (value, then id): per value >> 24, >> 16 and >> 8, per value, and per value and block of 4,096 ids. Finding
-- a deep row sums at most 256 counts of a level inside the bucket the level above chose (the top level: one count
-- per 2^24 values the list spans), then walks at most one block's rows, however many rows the list has and however
-- they crowd on one value (every question with 0 votes).
CREATE TABLE value_counts (
  list text NOT NULL,
  level smallint NOT NULL,
  bucket integer NOT NULL,
  block integer NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (list, level, bucket, block)
);
--> statement-breakpoint
-- The five counts a row adds to, as (level, bucket, block); seek.ts's valueAnchor reads them back.
CREATE FUNCTION agora_value_count_keys(value integer, id integer)
  RETURNS TABLE (level smallint, bucket integer, block integer) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  VALUES (0::smallint, value >> 24, 0), (1::smallint, value >> 16, 0), (2::smallint, value >> 8, 0),
         (3::smallint, value, 0), (4::smallint, value, id >> 12)
$$;
--> statement-breakpoint
-- Applies a statement's moves, (list, value, id, delta) rows, to the counts: summed per count first and written in
-- key order, so that statements moving rows concurrently lock the counts they share in one order (no deadlock).
CREATE FUNCTION agora_value_counts_apply(moves jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO value_counts AS c (list, level, bucket, block, n)
  SELECT m.list, k.level, k.bucket, k.block, sum(m.delta)
  FROM jsonb_to_recordset(moves) AS m(list text, value integer, id integer, delta integer),
       agora_value_count_keys(m.value, m.id) k
  GROUP BY 1, 2, 3, 4 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3, 4
  ON CONFLICT (list, level, bucket, block) DO UPDATE SET n = c.n + EXCLUDED.n;
$$;
--> statement-breakpoint
-- The descent of seek.ts's valueAnchor: level by level, the count inside the bucket the level above chose that holds
-- the skip-th row of the list in the walk's direction, with the rows before it. One row per level reached: a level
-- whose counts do not add up to the bucket above (or, for the top level, to the list's total) ends the descent. Its
-- statements are simple enough for PL/pgSQL to plan once per connection (one statement over the five levels was
-- planned anew on every call, for more than it then cost to run).
CREATE FUNCTION agora_value_anchor(list_name text, descending boolean, skip bigint, total bigint)
  RETURNS TABLE (level smallint, bucket integer, block integer, before bigint) LANGUAGE plpgsql STABLE AS $$
DECLARE
  lo bigint := -2147483648;
  hi bigint := 2147483647;
  parent_n bigint := total;
  parent_before bigint := 0;
  dir integer := CASE WHEN descending THEN -1 ELSE 1 END;
  hit record;
BEGIN
  FOR k IN 0..4 LOOP
    SELECT x.bucket, x.block, x.n, parent_before + x.before AS before, x.level_n INTO hit FROM (
      SELECT c.bucket, c.block, c.n,
             sum(c.n) OVER (ORDER BY dir * c.bucket::bigint, dir * c.block ROWS UNBOUNDED PRECEDING) - c.n AS before,
             sum(c.n) OVER () AS level_n
      FROM value_counts c
      WHERE c.list = list_name AND c.level = k AND c.bucket BETWEEN lo AND hi AND c.n <> 0
    ) x
    WHERE x.before <= skip - parent_before ORDER BY x.before DESC LIMIT 1;
    EXIT WHEN hit IS NULL OR hit.level_n <> parent_n;
    level := k; bucket := hit.bucket; block := hit.block; before := hit.before;
    RETURN NEXT;
    parent_n := hit.n;
    parent_before := hit.before;
    -- Levels 1 to 3 split a bucket of the one above into 2^8 (seek.ts, LEVEL_SHIFTS); level 4 counts its one value.
    IF k < 3 THEN
      lo := hit.bucket::bigint << 8;
      hi := ((hit.bucket::bigint + 1) << 8) - 1;
    ELSE
      lo := hit.bucket;
      hi := hit.bucket;
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint
-- Statement triggers with transition tables: a view flush or a backfill that moves thousands of rows writes each
-- counter once. An UPDATE that changes no counted value (an edit, an answer count) adds and removes the same rows,
-- which cancel out before anything is written.
-- A question counts in all the questions by votes and by views, and in its category's (category:<id>:votes|views).
CREATE FUNCTION agora_question_value_lists(votes integer, views integer, category_id integer)
  RETURNS TABLE (list text, value integer) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT l.list, l.value FROM (VALUES ('questions:votes', votes), ('questions:views', views),
    ('category:' || category_id || ':votes', votes), ('category:' || category_id || ':views', views)) l(list, value)
  WHERE l.list IS NOT NULL
$$;
--> statement-breakpoint
CREATE FUNCTION agora_questions_value_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moves jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT l.list, l.value, r.id, 1 AS delta
      FROM new_rows r, agora_question_value_lists(r.votes, r.views, r.category_id) l) m;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT l.list, l.value, r.id, -1 AS delta
      FROM old_rows r, agora_question_value_lists(r.votes, r.views, r.category_id) l) m;
  ELSE
    -- Out of its old lists and values, into its new ones: what did not move cancels out in the apply.
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT l.list, l.value, o.id, -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id, agora_question_value_lists(o.votes, o.views, o.category_id) l
      WHERE (n.votes, n.views, n.category_id) IS DISTINCT FROM (o.votes, o.views, o.category_id)
      UNION ALL
      SELECT l.list, l.value, n.id, 1
      FROM old_rows o JOIN new_rows n ON n.id = o.id, agora_question_value_lists(n.votes, n.views, n.category_id) l
      WHERE (n.votes, n.views, n.category_id) IS DISTINCT FROM (o.votes, o.views, o.category_id)) m;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM agora_value_counts_apply(moves);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_value_counts_insert AFTER INSERT ON questions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_questions_value_counts();
--> statement-breakpoint
CREATE TRIGGER questions_value_counts_update AFTER UPDATE ON questions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION agora_questions_value_counts();
--> statement-breakpoint
CREATE TRIGGER questions_value_counts_delete AFTER DELETE ON questions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_questions_value_counts();
--> statement-breakpoint
CREATE FUNCTION agora_users_value_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moves jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'users:reputation' AS list, r.reputation AS value, r.id, 1 AS delta FROM new_rows r) m;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'users:reputation' AS list, r.reputation AS value, r.id, -1 AS delta FROM old_rows r) m;
  ELSE
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'users:reputation' AS list, o.reputation AS value, o.id, -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.reputation IS DISTINCT FROM o.reputation
      UNION ALL SELECT 'users:reputation', n.reputation, n.id, 1
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.reputation IS DISTINCT FROM o.reputation) m;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM agora_value_counts_apply(moves);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER users_value_counts_insert AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_users_value_counts();
--> statement-breakpoint
CREATE TRIGGER users_value_counts_update AFTER UPDATE ON users
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION agora_users_value_counts();
--> statement-breakpoint
CREATE TRIGGER users_value_counts_delete AFTER DELETE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_users_value_counts();
--> statement-breakpoint
-- Bulk loads and TRUNCATE bypass the triggers: rebuilt from the tables, in key order (as 0027 explains).
CREATE FUNCTION agora_recount_values() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM value_counts;
  INSERT INTO value_counts (list, level, bucket, block, n)
  SELECT r.list, k.level, k.bucket, k.block, count(*)
  FROM (SELECT l.list, l.value, q.id FROM questions q, agora_question_value_lists(q.votes, q.views, q.category_id) l
        UNION ALL SELECT 'users:reputation', reputation, id FROM users) r,
       agora_value_count_keys(r.value, r.id) k
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
END $$;
--> statement-breakpoint
SELECT agora_recount_values();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_tag_statistics();
  PERFORM agora_recount_dated();
  PERFORM agora_recount_values();
  PERFORM pg_notify('agora_changes', '');
END $$;
