-- Deep pages of the lists by date start their walk at the day that holds their offset (shared/db/repositories/seek.ts,
-- dayAnchor), found from counters kept in the writing transaction: the posts per UTC day of 0011
-- ('day:<YYYY-MM-DD>:<kind>'), the posts per UTC month beside them ('month:<YYYY-MM>:<kind>', so that finding the
-- day sums a few dozen rows however old the site is), and the unanswered questions per day and month (kind
-- 'unanswered'). A post whose date changes (an UPDATE by an operator, an upsert by a loader with triggers on) moves
-- its counts to its new day and month.
CREATE FUNCTION agora_month_scope(at timestamp with time zone, kind text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN 'month:' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM') || ':' || kind;
--> statement-breakpoint
CREATE FUNCTION agora_dated_count_add(at timestamp with time zone, kind text, delta integer) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_count_add(agora_day_scope(at, kind), delta);
  PERFORM agora_count_add(agora_month_scope(at, kind), delta);
END $$;
--> statement-breakpoint
-- The months of inserted and deleted posts (their days are 0011's agora_posts_list_counts).
CREATE FUNCTION agora_posts_month_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM agora_count_add(agora_month_scope(NEW.created_at, TG_TABLE_NAME), 1);
  ELSE
    PERFORM agora_count_add(agora_month_scope(OLD.created_at, TG_TABLE_NAME), -1);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_month_counts AFTER INSERT OR DELETE ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_posts_month_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER answers_month_counts AFTER INSERT OR DELETE ON answers
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_posts_month_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER comments_month_counts AFTER INSERT OR DELETE ON comments
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_posts_month_counts();
--> statement-breakpoint
CREATE FUNCTION agora_posts_day_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_dated_count_add(OLD.created_at, TG_TABLE_NAME, -1);
  PERFORM agora_dated_count_add(NEW.created_at, TG_TABLE_NAME, 1);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_day_moved AFTER UPDATE OF created_at ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION agora_posts_day_moved();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER answers_day_moved AFTER UPDATE OF created_at ON answers
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION agora_posts_day_moved();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER comments_day_moved AFTER UPDATE OF created_at ON comments
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION agora_posts_day_moved();
--> statement-breakpoint
-- A question counts as unanswered on its day and month while its answers_count is 0: its first answer takes it
-- out, the removal of its last puts it back.
CREATE FUNCTION agora_questions_unanswered_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.answers_count = 0 THEN
    PERFORM agora_dated_count_add(OLD.created_at, 'unanswered', -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.answers_count = 0 THEN
    PERFORM agora_dated_count_add(NEW.created_at, 'unanswered', 1);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_unanswered_days AFTER INSERT OR DELETE ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_questions_unanswered_days();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_unanswered_days_update AFTER UPDATE OF answers_count, created_at ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN ((OLD.answers_count = 0) IS DISTINCT FROM (NEW.answers_count = 0)
        OR (NEW.answers_count = 0 AND OLD.created_at IS DISTINCT FROM NEW.created_at))
  EXECUTE FUNCTION agora_questions_unanswered_days();
--> statement-breakpoint
-- Bulk loads bypass the triggers: rebuilt after agora_recount_qa_reads(), which rebuilds the posts' days and
-- empties every other day counter first. The months are the sums of the days.
CREATE FUNCTION agora_recount_dated() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM list_counts WHERE scope LIKE 'day:%:unanswered' OR scope LIKE 'month:%';
  INSERT INTO list_counts (scope, n)
  SELECT agora_day_scope(created_at, 'unanswered'), count(*) FROM questions WHERE answers_count = 0 GROUP BY 1;
  INSERT INTO list_counts (scope, n)
  SELECT 'month:' || substr(scope, 5, 7) || substr(scope, 15), sum(n) FROM list_counts
  WHERE scope LIKE 'day:____-__-__:%' GROUP BY 1;
END $$;
--> statement-breakpoint
SELECT agora_recount_dated();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_tag_statistics();
  PERFORM agora_recount_dated();
  PERFORM pg_notify('agora_changes', '');
END $$;
