-- Change notifications for the Q&A read cache (services/http/read-cache.ts): every Q&A process LISTENs on
-- agora_changes and drops its cached responses on each notification. One statement-level trigger per table that a
-- cached read selects from (questions, answers, users, tags, question_tags, categories); a new cached route that
-- reads another table must add it here. The payload is empty so that PostgreSQL folds all the notifications of
-- one transaction into one, delivered at commit (never for a rolled-back write).
CREATE FUNCTION agora_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('agora_changes', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON questions
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint
CREATE TRIGGER answers_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON answers
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint
CREATE TRIGGER users_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint
CREATE TRIGGER tags_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tags
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint
CREATE TRIGGER question_tags_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON question_tags
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint
CREATE TRIGGER categories_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON categories
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint

-- Bulk loaders write with triggers off (session_replication_role = replica), so none of the above fires; they
-- always finish with agora_recount(), which therefore notifies too. The counting body of migration 0002 is kept
-- as agora_recount_counters() rather than copied here.
ALTER FUNCTION agora_recount() RENAME TO agora_recount_counters;
--> statement-breakpoint
CREATE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM pg_notify('agora_changes', '');
END $$;
