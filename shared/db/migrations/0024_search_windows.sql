-- A search's date window (`fromdate`, `todate`) narrows the user-name candidates too: the user branch keeps its
-- statements inside agora_user_name_candidates (0016, planned once per connection, 0020's bitmap-only settings), so
-- the window is two more arguments, NULL for no bound. They default to NULL: the two-argument call of a search
-- without a window is unchanged. The window tests the users the name indexes found, before the most recent
-- max_rows are kept, so a window picks its candidates rather than filtering them.
DROP FUNCTION agora_user_name_candidates(text, int);
--> statement-breakpoint
CREATE FUNCTION agora_user_name_candidates(
  search_text text,
  max_rows int,
  from_date timestamptz DEFAULT NULL,
  to_date timestamptz DEFAULT NULL
)
RETURNS TABLE (id int, similarity float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE
ROWS 200
SET plan_cache_mode = force_generic_plan
SET enable_indexscan = off
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
  trimmed text := btrim(search_text);
  pattern text := '%' || replace(replace(replace(search_text, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  prefix text := lower(btrim(search_text)) COLLATE "C";
  -- Above every string that starts with the prefix, in code point order.
  prefix_end text := (lower(btrim(search_text)) || chr(1114111)) COLLATE "C";
BEGIN
  IF char_length(trimmed) >= 3 THEN
    RETURN QUERY
      SELECT c.id, greatest(word_similarity(search_text, c.username), word_similarity(search_text, c.display_name))::float8
      FROM (SELECT u.id, u.username, u.display_name FROM users u
            WHERE (u.username ILIKE pattern OR u.display_name ILIKE pattern
                   OR search_text <% u.username OR search_text <% u.display_name)
              AND (from_date IS NULL OR u.created_at >= from_date)
              AND (to_date IS NULL OR u.created_at <= to_date)
            ORDER BY u.id DESC LIMIT max_rows) c;
  ELSIF char_length(trimmed) > 0 THEN
    -- Each prefix range read on its index, then the most recent ids of both: walking the users and lowering two
    -- names per row until enough match, which the planner prefers for a common prefix, costs far more than it
    -- estimates.
    RETURN QUERY
      SELECT c.id, greatest(word_similarity(search_text, c.username), word_similarity(search_text, c.display_name))::float8
      FROM (SELECT m.id FROM (SELECT n.id FROM users n
                              WHERE lower(n.username) COLLATE "C" >= prefix AND lower(n.username) COLLATE "C" < prefix_end
                                AND (from_date IS NULL OR n.created_at >= from_date)
                                AND (to_date IS NULL OR n.created_at <= to_date)
                              UNION
                              SELECT n.id FROM users n
                              WHERE lower(n.display_name) COLLATE "C" >= prefix
                                AND lower(n.display_name) COLLATE "C" < prefix_end
                                AND (from_date IS NULL OR n.created_at >= from_date)
                                AND (to_date IS NULL OR n.created_at <= to_date)) m
            ORDER BY m.id DESC LIMIT max_rows) top
      JOIN users c ON c.id = top.id;
  END IF;
END
$$;
