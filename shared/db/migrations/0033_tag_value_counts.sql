-- A tag's questions by votes and by views (tag:<id>:votes|views) are counted as all the questions are (0028), so a
-- deep page of a tag's list starts its walk near its row (seek.ts, valueAnchor) instead of walking up to half the
-- tag's question_tags index. The rows of a list are question_tags rows: their sort keys follow the question (0009).
--
-- Where the moves are counted, so that every transaction takes the count rows it shares with others in one order
-- (list name, then key; 'category:' < 'questions:' < 'tag:'): a question's votes or views change in the questions
-- statement's own trigger, in the same apply as its other lists; a question's tags come and go in question_tags'
-- statement triggers. Only a question's deletion, whose cascade removes its tags before the questions statement's
-- trigger runs, takes them in the other order; PostgreSQL breaks such a deadlock and the writes retry (writes.ts).
-- A tag's views are spread over many values (a few hundred questions per value in the largest tag of a 1M seed), so
-- its blocks of ids within one value would hold about a row each, as many rows as question_tags has: those lists are
-- counted down to the value only (a move without an id), and a deep page of a tag by views walks at most one value's
-- rows (the descent ends at the values, seek.ts). Votes crowd on a few values (every question with 0 votes): a tag's
-- votes keep the blocks.
CREATE OR REPLACE FUNCTION agora_value_count_keys(value integer, id integer)
  RETURNS TABLE (level smallint, bucket integer, block integer) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT * FROM (VALUES (0::smallint, value >> 24, 0), (1::smallint, value >> 16, 0), (2::smallint, value >> 8, 0),
                        (3::smallint, value, 0)) levels
  UNION ALL SELECT 4::smallint, value, id >> 12 WHERE id IS NOT NULL
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_questions_value_counts() RETURNS trigger LANGUAGE plpgsql AS $$
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
    -- Out of its old lists and values, into its new ones: what did not move cancels out in the apply. Its tags'
    -- lists move with it (question_tags' keys follow it in the same statement, 0009).
    SELECT jsonb_agg(m) INTO moves FROM (
      WITH moved AS (
        SELECT o.id, o.votes AS old_votes, o.views AS old_views, o.category_id AS old_category,
               n.votes AS new_votes, n.views AS new_views, n.category_id AS new_category
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (n.votes, n.views, n.category_id) IS DISTINCT FROM (o.votes, o.views, o.category_id))
      SELECT l.list, l.value, m.id, -1 AS delta
      FROM moved m, agora_question_value_lists(m.old_votes, m.old_views, m.old_category) l
      UNION ALL
      SELECT l.list, l.value, m.id, 1
      FROM moved m, agora_question_value_lists(m.new_votes, m.new_views, m.new_category) l
      UNION ALL
      SELECT 'tag:' || qt.tag_id || ':' || k.sort, k.value, CASE WHEN k.sort = 'votes' THEN m.id END, k.delta
      FROM moved m JOIN question_tags qt ON qt.question_id = m.id,
           LATERAL (VALUES ('votes', m.old_votes, -1), ('votes', m.new_votes, 1),
                           ('views', m.old_views, -1), ('views', m.new_views, 1)) k(sort, value, delta)) m;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM agora_value_counts_apply(moves);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION agora_question_tags_value_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moves jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'tag:' || r.tag_id || ':' || k.sort AS list, k.value, k.id, 1 AS delta
      FROM new_rows r, LATERAL (VALUES ('votes', r.votes, r.question_id), ('views', r.views, NULL)) k(sort, value, id)) m;
  ELSE
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT 'tag:' || r.tag_id || ':' || k.sort AS list, k.value, k.id, -1 AS delta
      FROM old_rows r, LATERAL (VALUES ('votes', r.votes, r.question_id), ('views', r.views, NULL)) k(sort, value, id)) m;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM agora_value_counts_apply(moves);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER question_tags_value_counts_insert AFTER INSERT ON question_tags
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_question_tags_value_counts();
--> statement-breakpoint
CREATE TRIGGER question_tags_value_counts_delete AFTER DELETE ON question_tags
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_question_tags_value_counts();
-- The recount with the tags' lists, and the counts of the rows written before these triggers, are migration 0036's
-- (one rebuild for both migrations); until then the tags' counts do not add up to their totals and are not used.
