-- A search's user-name candidates: the max_rows most recent users whose username or display name matches the
-- search text. A function of its own so that its statements are planned once per connection (forced generic
-- plans): planned inline with each search, the trigram estimates of the four name conditions cost several times
-- their execution, and the generic plan, a bitmap OR of the trigram indexes bounded by the matches, is the right
-- one for any text of three characters or more.
-- A shorter text has no trigram for those indexes to look up, so a substring or similarity test would read every
-- user: it matches the names that start with it instead, on two prefix indexes.
CREATE INDEX users_username_prefix_idx ON users ((lower(username) COLLATE "C"), id);
--> statement-breakpoint
CREATE INDEX users_display_name_prefix_idx ON users ((lower(display_name) COLLATE "C"), id);
--> statement-breakpoint
CREATE FUNCTION agora_user_name_candidates(search_text text, max_rows int)
RETURNS TABLE (id int, similarity float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE
ROWS 200
SET plan_cache_mode = force_generic_plan
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
            WHERE u.username ILIKE pattern OR u.display_name ILIKE pattern
               OR search_text <% u.username OR search_text <% u.display_name
            ORDER BY u.id DESC LIMIT max_rows) c;
  ELSIF char_length(trimmed) > 0 THEN
    -- Each prefix range read on its index, then the most recent ids of both: walking the users and lowering two
    -- names per row until enough match, which the planner prefers for a common prefix, costs far more than it
    -- estimates.
    RETURN QUERY
      SELECT c.id, greatest(word_similarity(search_text, c.username), word_similarity(search_text, c.display_name))::float8
      FROM (SELECT m.id FROM (SELECT n.id FROM users n
                              WHERE lower(n.username) COLLATE "C" >= prefix AND lower(n.username) COLLATE "C" < prefix_end
                              UNION
                              SELECT n.id FROM users n
                              WHERE lower(n.display_name) COLLATE "C" >= prefix
                                AND lower(n.display_name) COLLATE "C" < prefix_end) m
            ORDER BY m.id DESC LIMIT max_rows) top
      JOIN users c ON c.id = top.id;
  END IF;
END
$$;
