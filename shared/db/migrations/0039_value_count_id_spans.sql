-- Deep pages by a number end their descent (seek.ts) in a block of 4,096 ids of one value (0028). To find the block
-- that holds its row the descent summed every block of that value: 245 of them per value at 1M questions, ten times
-- as many at 10M, so a page at 50 % cost more as the table grew. Each value is now also counted per span of 65,536
-- ids, sixteen blocks to a span, and agora_value_anchor_spans descends from the value to its spans and then to the
-- span's blocks: at most ids / 65,536 spans and 16 blocks. Each counted row has one more key; the lists counted
-- without ids (a tag's views, users by name) still stop at the value.
--
-- The levels keep their numbers: the blocks stay level 4 and the spans are level 5, so the previous release's code,
-- which calls agora_value_anchor (0034, unchanged) and reads level 4 as blocks, pages correctly beside this one
-- during a rolling update. A later release may drop agora_value_anchor.
CREATE OR REPLACE FUNCTION agora_value_count_keys(value integer, id integer)
  RETURNS TABLE (level smallint, bucket integer, block integer) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT * FROM (VALUES (0::smallint, value >> 24, 0), (1::smallint, value >> 16, 0), (2::smallint, value >> 8, 0),
                        (3::smallint, value, 0)) levels
  UNION ALL SELECT 4::smallint, value, id >> 12 WHERE id IS NOT NULL
  UNION ALL SELECT 5::smallint, value, id >> 16 WHERE id IS NOT NULL
$$;
--> statement-breakpoint
-- As 0036's, with the spans of level 5 summed from the blocks of level 4.
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
  UNION ALL SELECT list, 5::smallint, value, block >> 4, sum(n) FROM blocks WHERE block IS NOT NULL GROUP BY 1, 3, 4
  UNION ALL SELECT list, 3::smallint, value, 0, n FROM vals
  UNION ALL SELECT list, 2::smallint, value >> 8, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 1::smallint, value >> 16, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 0::smallint, value >> 24, 0, sum(n) FROM vals GROUP BY 1, 3
  ORDER BY 1, 2, 3, 4;
END $$;
--> statement-breakpoint
-- As 0034's agora_value_anchor, one level deeper: after the value (level 3) its spans (level 5), after the span its
-- 16 blocks (level 4). Rows in the order of the descent, the deepest last.
CREATE FUNCTION agora_value_anchor_spans(list_name text, descending boolean, skip bigint, total bigint)
  RETURNS TABLE (level smallint, bucket integer, block integer, before bigint) LANGUAGE plpgsql STABLE AS $$
DECLARE
  lo bigint := -2147483648;
  hi bigint := 2147483647;
  block_lo integer := -2147483648;
  block_hi integer := 2147483647;
  k integer;
  parent_n bigint := total;
  parent_before bigint := 0;
  hit record;
BEGIN
  FOREACH k IN ARRAY ARRAY[0, 1, 2, 3, 5, 4] LOOP
    -- The counts in the primary key's order, whichever the walk's direction: the rows before a count in a
    -- descending walk are the level's total less the counts up to and including it.
    SELECT x.bucket, x.block, x.n, parent_before + x.before::bigint AS before, x.level_n::bigint AS level_n INTO hit
    FROM (
      SELECT t.bucket, t.block, t.n, t.level_n,
             CASE WHEN descending THEN t.level_n - t.running ELSE t.running - t.n END AS before
      FROM (
        SELECT c.bucket, c.block, c.n,
               sum(c.n::float8) OVER (ORDER BY c.bucket, c.block ROWS UNBOUNDED PRECEDING) AS running,
               sum(c.n::float8) OVER () AS level_n
        FROM value_counts c
        WHERE c.list = list_name AND c.level = k AND c.bucket BETWEEN lo AND hi
          AND c.block BETWEEN block_lo AND block_hi AND c.n <> 0
      ) t
    ) x
    WHERE x.before <= skip - parent_before ORDER BY x.before DESC LIMIT 1;
    EXIT WHEN hit IS NULL OR hit.level_n <> parent_n;
    level := k; bucket := hit.bucket; block := hit.block; before := hit.before;
    RETURN NEXT;
    parent_n := hit.n;
    parent_before := hit.before;
    -- Levels 1 to 3 split a bucket of the one above into 2^8 (seek.ts, LEVEL_SHIFTS); the spans and blocks count
    -- the one value, the blocks within their span.
    IF k < 3 THEN
      lo := hit.bucket::bigint << 8;
      hi := ((hit.bucket::bigint + 1) << 8) - 1;
    ELSE
      lo := hit.bucket;
      hi := hit.bucket;
    END IF;
    IF k = 5 THEN
      block_lo := hit.block << 4;
      block_hi := (hit.block << 4) + 15;
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint
SELECT agora_recount_values();
