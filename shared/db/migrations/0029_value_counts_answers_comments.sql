-- All answers and all comments by votes (GET /answers?sort=votes, GET /comments?sort=votes) are every row of their
-- table in order of votes and then id: counted by migration 0028's levels as 'answers:votes' and 'comments:votes',
-- so that their deep page numbers start near their row too.
CREATE FUNCTION agora_votes_value_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  list_name text := TG_TABLE_NAME || ':votes';
  moves jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(m) INTO moves FROM (SELECT list_name AS list, r.votes AS value, r.id, 1 AS delta FROM new_rows r) m;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(m) INTO moves FROM (SELECT list_name AS list, r.votes AS value, r.id, -1 AS delta FROM old_rows r) m;
  ELSE
    SELECT jsonb_agg(m) INTO moves FROM (
      SELECT list_name AS list, o.votes AS value, o.id, -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.votes IS DISTINCT FROM o.votes
      UNION ALL SELECT list_name, n.votes, n.id, 1
      FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.votes IS DISTINCT FROM o.votes) m;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM agora_value_counts_apply(moves);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER answers_value_counts_insert AFTER INSERT ON answers
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_votes_value_counts();
--> statement-breakpoint
CREATE TRIGGER answers_value_counts_update AFTER UPDATE ON answers
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_votes_value_counts();
--> statement-breakpoint
CREATE TRIGGER answers_value_counts_delete AFTER DELETE ON answers
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_votes_value_counts();
--> statement-breakpoint
CREATE TRIGGER comments_value_counts_insert AFTER INSERT ON comments
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_votes_value_counts();
--> statement-breakpoint
CREATE TRIGGER comments_value_counts_update AFTER UPDATE ON comments
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_votes_value_counts();
--> statement-breakpoint
CREATE TRIGGER comments_value_counts_delete AFTER DELETE ON comments
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION agora_votes_value_counts();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount_values() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM value_counts;
  INSERT INTO value_counts (list, level, bucket, block, n)
  SELECT r.list, k.level, k.bucket, k.block, count(*)
  FROM (SELECT l.list, l.value, q.id FROM questions q, agora_question_value_lists(q.votes, q.views, q.category_id) l
        UNION ALL SELECT 'answers:votes', votes, id FROM answers
        UNION ALL SELECT 'comments:votes', votes, id FROM comments
        UNION ALL SELECT 'users:reputation', reputation, id FROM users) r,
       agora_value_count_keys(r.value, r.id) k
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
END $$;
--> statement-breakpoint
SELECT agora_recount_values();
