-- A category's questions by date, all of them and the unanswered ones, and the users by date start their deep pages
-- at the day that holds their offset too (seek.ts, dayAnchor): list_counts keeps them per UTC day and month, as 0011
-- and 0026 keep the site's posts ('day:<YYYY-MM-DD>:category:<id>', 'day:<YYYY-MM-DD>:category-unanswered:<id>',
-- 'day:<YYYY-MM-DD>:users', and their months), in the writing transaction. A question that changes category, date or
-- answered state moves its counts; so does a user whose date changes.
CREATE FUNCTION agora_questions_category_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.category_id IS NOT NULL THEN
    PERFORM agora_dated_count_add(OLD.created_at, 'category:' || OLD.category_id, -1);
    IF OLD.answers_count = 0 THEN
      PERFORM agora_dated_count_add(OLD.created_at, 'category-unanswered:' || OLD.category_id, -1);
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.category_id IS NOT NULL THEN
    PERFORM agora_dated_count_add(NEW.created_at, 'category:' || NEW.category_id, 1);
    IF NEW.answers_count = 0 THEN
      PERFORM agora_dated_count_add(NEW.created_at, 'category-unanswered:' || NEW.category_id, 1);
    END IF;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_category_days AFTER INSERT OR DELETE ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_questions_category_days();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_category_days_update AFTER UPDATE OF category_id, created_at, answers_count
  ON questions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.category_id IS DISTINCT FROM NEW.category_id OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR (OLD.answers_count = 0) IS DISTINCT FROM (NEW.answers_count = 0))
  EXECUTE FUNCTION agora_questions_category_days();
--> statement-breakpoint
-- Users per day of their created_at (their months by 0026's agora_dated_count_add).
CREATE FUNCTION agora_rows_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM agora_dated_count_add(NEW.created_at, TG_TABLE_NAME, 1);
  ELSE
    PERFORM agora_dated_count_add(OLD.created_at, TG_TABLE_NAME, -1);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER users_days AFTER INSERT OR DELETE ON users
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_rows_days();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER users_day_moved AFTER UPDATE OF created_at ON users
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION agora_posts_day_moved();
--> statement-breakpoint
-- Bulk loads bypass the triggers: the days rebuilt after agora_recount_qa_reads() (which empties every day counter),
-- their months by agora_recount_dated() (which sums every kind's days).
CREATE FUNCTION agora_recount_list_days() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM list_counts
  WHERE scope LIKE 'day:%:category:%' OR scope LIKE 'day:%:category-unanswered:%' OR scope LIKE 'day:%:users';
  INSERT INTO list_counts (scope, n)
  SELECT agora_day_scope(created_at, 'category:' || category_id), count(*) FROM questions
  WHERE category_id IS NOT NULL GROUP BY 1
  UNION ALL
  SELECT agora_day_scope(created_at, 'category-unanswered:' || category_id), count(*) FROM questions
  WHERE category_id IS NOT NULL AND answers_count = 0 GROUP BY 1
  UNION ALL
  SELECT agora_day_scope(created_at, 'users'), count(*) FROM users GROUP BY 1;
END $$;
--> statement-breakpoint
SELECT agora_recount_list_days();
--> statement-breakpoint
SELECT agora_recount_dated();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_tag_statistics();
  PERFORM agora_recount_list_days();
  PERFORM agora_recount_dated();
  PERFORM agora_recount_values();
  PERFORM pg_notify('agora_changes', '');
END $$;
