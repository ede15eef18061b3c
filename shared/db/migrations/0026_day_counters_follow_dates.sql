-- The posts-per-day counters (0011) date each post by its created_at; they followed inserts and deletes only. Deep
-- pages of the lists by date now start their walk from these counters (shared/db/repositories/seek.ts, dayAnchor),
-- so a post whose date changes (an UPDATE by an operator, an upsert by a loader with triggers on) moves its count to
-- its new day in the same transaction, like every other counter.
CREATE FUNCTION agora_posts_day_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_count_add(agora_day_scope(OLD.created_at, TG_TABLE_NAME), -1);
  PERFORM agora_count_add(agora_day_scope(NEW.created_at, TG_TABLE_NAME), 1);
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

-- The unanswered questions per UTC day ('day:<date>:unanswered'), kept like the others in the writing transaction,
-- so that deep pages of sort=unanswered start at a day too. A question counts on its day while its answers_count is
-- 0: its first answer takes it out, the removal of its last puts it back.
CREATE FUNCTION agora_questions_unanswered_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.answers_count = 0 THEN
    PERFORM agora_count_add(agora_day_scope(OLD.created_at, 'unanswered'), -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.answers_count = 0 THEN
    PERFORM agora_count_add(agora_day_scope(NEW.created_at, 'unanswered'), 1);
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
-- Bulk loads bypass the triggers: rebuilt after agora_recount_qa_reads(), which empties every day counter first.
CREATE FUNCTION agora_recount_unanswered_days() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM list_counts WHERE scope LIKE 'day:%:unanswered';
  INSERT INTO list_counts (scope, n)
  SELECT agora_day_scope(created_at, 'unanswered'), count(*) FROM questions WHERE answers_count = 0 GROUP BY 1;
END $$;
--> statement-breakpoint
SELECT agora_recount_unanswered_days();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_tag_statistics();
  PERFORM agora_recount_unanswered_days();
  PERFORM pg_notify('agora_changes', '');
END $$;
