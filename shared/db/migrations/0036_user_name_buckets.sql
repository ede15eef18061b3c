-- Deep pages of users by name start near their row, as the lists by a number do (0028, seek.ts valueAnchor). A name
-- is not a number, so each user is counted under the bucket of names it falls in: user_name_bounds holds every
-- three-letter string 'aaa' to 'zzz', numbered in the order of agora_names (the list's own collation), and a name's
-- bucket is the number of the last bound at or before its lower() (0 before 'aaa'). Any sorted set of bounds keeps
-- each bucket one contiguous range of the list; these need no upkeep as users come and go, at the price of buckets
-- that follow how names are spread (names before 'aaa', digits and punctuation, share bucket 0; names in scripts
-- ICU sorts after Latin share the last one). Within a bucket, rows are in name order, not id order: the counts stop
-- at the buckets (a move without an id, as a tag's views in 0033), and a deep page walks at most one bucket.
CREATE TABLE user_name_bounds (
  bucket integer PRIMARY KEY,
  bound text COLLATE agora_names NOT NULL UNIQUE
);
--> statement-breakpoint
INSERT INTO user_name_bounds (bucket, bound)
SELECT row_number() OVER (ORDER BY s.bound COLLATE agora_names), s.bound
FROM (SELECT chr(97 + a) || chr(97 + b) || chr(97 + c) AS bound
      FROM generate_series(0, 25) a, generate_series(0, 25) b, generate_series(0, 25) c) s;
--> statement-breakpoint
CREATE FUNCTION agora_user_name_bucket(display_name text) RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce((SELECT b.bucket FROM user_name_bounds b WHERE b.bound <= lower(display_name) COLLATE agora_names
                   ORDER BY b.bound DESC LIMIT 1), 0)
$$;
--> statement-breakpoint
-- As 0028's, with the users by name (users:name) beside users:reputation.
CREATE OR REPLACE FUNCTION agora_users_value_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moves jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'users:reputation' AS list, r.reputation AS value, r.id, 1 AS delta FROM new_rows r
      UNION ALL SELECT 'users:name', agora_user_name_bucket(r.display_name), NULL, 1 FROM new_rows r) m;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'users:reputation' AS list, r.reputation AS value, r.id, -1 AS delta FROM old_rows r
      UNION ALL SELECT 'users:name', agora_user_name_bucket(r.display_name), NULL, -1 FROM old_rows r) m;
  ELSE
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'users:reputation' AS list, o.reputation AS value, o.id, -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.reputation IS DISTINCT FROM o.reputation
      UNION ALL SELECT 'users:reputation', n.reputation, n.id, 1
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.reputation IS DISTINCT FROM o.reputation
      UNION ALL SELECT 'users:name', agora_user_name_bucket(o.display_name), NULL, -1
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.display_name IS DISTINCT FROM o.display_name
      UNION ALL SELECT 'users:name', agora_user_name_bucket(n.display_name), NULL, 1
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.display_name IS DISTINCT FROM o.display_name) m;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM agora_value_counts_apply(moves);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- As 0032's, with a tag's lists (0033) and the users by name. question_tags' keys are the questions' once
-- agora_recount_read_scale has run, which agora_recount does first.
CREATE OR REPLACE FUNCTION agora_recount_values() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM value_counts;
  INSERT INTO value_counts (list, level, bucket, block, n)
  WITH blocks AS MATERIALIZED (
    SELECT r.list, r.value, r.id >> 12 AS block, count(*) AS n
    FROM (SELECT l.list, l.value, q.id FROM questions q, agora_question_value_lists(q.votes, q.views, q.category_id) l
          UNION ALL SELECT 'tag:' || qt.tag_id || ':' || k.sort, k.value, k.id
                    FROM question_tags qt,
                         LATERAL (VALUES ('votes', qt.votes, qt.question_id), ('views', qt.views, NULL)) k(sort, value, id)
          UNION ALL SELECT 'answers:votes', votes, id FROM answers
          UNION ALL SELECT 'comments:votes', votes, id FROM comments
          UNION ALL SELECT 'users:reputation', reputation, id FROM users
          UNION ALL SELECT 'users:name', agora_user_name_bucket(display_name), NULL FROM users) r
    GROUP BY 1, 2, 3),
  vals AS MATERIALIZED (SELECT list, value, sum(n) AS n FROM blocks GROUP BY 1, 2)
  SELECT list, 4::smallint, value, block, n FROM blocks WHERE block IS NOT NULL
  UNION ALL SELECT list, 3::smallint, value, 0, n FROM vals
  UNION ALL SELECT list, 2::smallint, value >> 8, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 1::smallint, value >> 16, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 0::smallint, value >> 24, 0, sum(n) FROM vals GROUP BY 1, 3
  ORDER BY 1, 2, 3, 4;
END $$;
--> statement-breakpoint
SELECT agora_recount_values();
