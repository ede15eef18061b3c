-- Users by name (0036) start a deep page at its bucket of names, then skip the rows of that bucket before the page.
-- The three-letter bounds follow the alphabet, not the names: at 250,000 seeded users a bucket such as 'oli' holds
-- thousands, which the page skips one by one. The bounds now also hold every 64th name of the list as it was at the
-- last bulk load (agora_recount) or at this migration, so a bucket holds at most about 64 names (more only when the
-- names are equal), and the three-letter bounds stay for the names that come later.
--
-- The buckets are numbered from the end: the last bound is always LAST_NAME_BUCKET (2^24 - 1, seek.ts), however
-- many there are, and the first bound is '' (no name sorts before it), so every bucket from the first to the last
-- exists. The numbers change only with the counts that use them (agora_recount, this migration).
CREATE FUNCTION agora_refresh_user_name_bounds() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_name_bounds;
  INSERT INTO user_name_bounds (bucket, bound)
  SELECT 16777215 - count(*) OVER () + row_number() OVER (ORDER BY b.bound), b.bound
  FROM (SELECT ''::text COLLATE agora_names AS bound
        UNION SELECT chr(97 + a) || chr(97 + b) || chr(97 + c)
              FROM generate_series(0, 25) a, generate_series(0, 25) b, generate_series(0, 25) c
        UNION SELECT n.name FROM (
                SELECT lower(display_name) COLLATE agora_names AS name,
                       row_number() OVER (ORDER BY lower(display_name) COLLATE agora_names) AS nth
                FROM users) n
              WHERE n.nth % 64 = 0) b;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_accepts();
  PERFORM agora_recount_tag_statistics();
  PERFORM agora_recount_list_days();
  PERFORM agora_recount_dated();
  PERFORM agora_refresh_user_name_bounds();
  PERFORM agora_recount_values();
  PERFORM pg_notify('agora_changes', '');
END $$;
--> statement-breakpoint
SELECT agora_refresh_user_name_bounds();
--> statement-breakpoint
SELECT agora_recount_values();
