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
