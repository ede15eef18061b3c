-- Migration 0028's descent (seek.ts, valueAnchor), cheaper per level: each level's counts are read in the order of
-- value_counts' primary key, whatever the walk's direction (0028 ordered them by an expression of it, so every level
-- was sorted first), and summed as float8 (sum() of a bigint is numeric, several times slower per row; float8 holds every
-- integer below 2^53 exactly). Same arguments, same rows.
CREATE OR REPLACE FUNCTION agora_value_anchor(list_name text, descending boolean, skip bigint, total bigint)
  RETURNS TABLE (level smallint, bucket integer, block integer, before bigint) LANGUAGE plpgsql STABLE AS $$
DECLARE
  lo bigint := -2147483648;
  hi bigint := 2147483647;
  parent_n bigint := total;
  parent_before bigint := 0;
  hit record;
BEGIN
  FOR k IN 0..4 LOOP
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
        WHERE c.list = list_name AND c.level = k AND c.bucket BETWEEN lo AND hi AND c.n <> 0
      ) t
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
