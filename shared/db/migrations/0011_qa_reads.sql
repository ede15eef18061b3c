-- The reads of issue 19 (per-user activity, comment lists, site info, accept times), at a cost that does not grow
-- with the site: an index per list and sort, and exact totals kept in list_counts (0009) by deferred triggers, in the
-- writing transaction, like the other counters.

-- A user's questions, answers and comments in each sort; every comment and answer by date; comments by votes.
CREATE INDEX questions_author_newest_idx ON questions (author_id, created_at DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX questions_author_votes_idx ON questions (author_id, votes DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX questions_author_views_idx ON questions (author_id, views DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX answers_author_newest_idx ON answers (author_id, created_at DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX answers_author_votes_idx ON answers (author_id, votes DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
-- A user's questions that have an accepted answer (their timeline's accepts).
CREATE INDEX questions_author_accepted_idx ON questions (author_id, id) WHERE has_accepted;
--> statement-breakpoint
CREATE INDEX answers_newest_idx ON answers (created_at DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX comments_newest_idx ON comments (created_at DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX comments_votes_idx ON comments (votes DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX comments_author_newest_idx ON comments (author_id, created_at DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX comments_author_votes_idx ON comments (author_id, votes DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint

-- When an answer was accepted (a user's timeline shows accepts). Set by the database whatever path accepts; answers
-- accepted before this column existed (and imported ones, whose dumps carry no accept time) take their creation time.
ALTER TABLE answers ADD COLUMN accepted_at timestamp with time zone;
--> statement-breakpoint
UPDATE answers SET accepted_at = created_at WHERE is_accepted;
--> statement-breakpoint
CREATE FUNCTION agora_answers_accepted_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.is_accepted THEN
    NEW.accepted_at := NULL;
  ELSIF TG_OP = 'INSERT' THEN
    NEW.accepted_at := coalesce(NEW.accepted_at, NEW.created_at);
  ELSIF NOT OLD.is_accepted THEN
    NEW.accepted_at := now();
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER answers_accepted_at BEFORE INSERT OR UPDATE OF is_accepted ON answers
  FOR EACH ROW EXECUTE FUNCTION agora_answers_accepted_at();
--> statement-breakpoint
ALTER TABLE answers ENABLE ALWAYS TRIGGER answers_accepted_at;
--> statement-breakpoint

-- Counters (scopes of list_counts): 'answers', 'comments', 'user:<id>:comments', 'questions:accepted', and the posts
-- of each UTC day, 'day:<YYYY-MM-DD>:questions|answers|comments' (GET /info's activity).
CREATE FUNCTION agora_day_scope(at timestamp with time zone, kind text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN 'day:' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') || ':' || kind;
--> statement-breakpoint
CREATE FUNCTION agora_posts_list_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
  post record;
BEGIN
  IF TG_OP = 'INSERT' THEN post := NEW; ELSE post := OLD; END IF;
  IF TG_TABLE_NAME <> 'questions' THEN
    PERFORM agora_count_add(TG_TABLE_NAME, delta);
  END IF;
  IF TG_TABLE_NAME = 'comments' THEN
    PERFORM agora_count_add('user:' || post.author_id || ':comments', delta);
  END IF;
  PERFORM agora_count_add(agora_day_scope(post.created_at, TG_TABLE_NAME), delta);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_qa_reads_counts AFTER INSERT OR DELETE ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_posts_list_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER answers_qa_reads_counts AFTER INSERT OR DELETE ON answers
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_posts_list_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER comments_qa_reads_counts AFTER INSERT OR DELETE ON comments
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_posts_list_counts();
--> statement-breakpoint
CREATE FUNCTION agora_questions_accepted_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.has_accepted THEN
    PERFORM agora_count_add('questions:accepted', -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.has_accepted THEN
    PERFORM agora_count_add('questions:accepted', 1);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_accepted_count AFTER INSERT OR DELETE ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_questions_accepted_count();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_accepted_count_update AFTER UPDATE OF has_accepted ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.has_accepted IS DISTINCT FROM NEW.has_accepted)
  EXECUTE FUNCTION agora_questions_accepted_count();
--> statement-breakpoint

-- The comment lists are in the read cache: comments notify like the tables of 0004.
CREATE TRIGGER comments_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON comments
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
--> statement-breakpoint

-- Bulk loads bypass the triggers: agora_recount() rebuilds these counters after those of 0009 (which empties
-- list_counts first).
CREATE FUNCTION agora_recount_qa_reads() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE answers SET accepted_at = created_at WHERE is_accepted AND accepted_at IS NULL;
  DELETE FROM list_counts WHERE scope IN ('answers', 'comments', 'questions:accepted')
    OR scope LIKE 'user:%:comments' OR scope LIKE 'day:%';
  INSERT INTO list_counts (scope, n)
  SELECT 'answers', count(*) FROM answers
  UNION ALL SELECT 'comments', count(*) FROM comments
  UNION ALL SELECT 'questions:accepted', count(*) FROM questions WHERE has_accepted
  UNION ALL SELECT 'user:' || author_id || ':comments', count(*) FROM comments GROUP BY author_id
  UNION ALL SELECT agora_day_scope(created_at, 'questions'), count(*) FROM questions GROUP BY 1
  UNION ALL SELECT agora_day_scope(created_at, 'answers'), count(*) FROM answers GROUP BY 1
  UNION ALL SELECT agora_day_scope(created_at, 'comments'), count(*) FROM comments GROUP BY 1;
END $$;
--> statement-breakpoint
SELECT agora_recount_qa_reads();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM pg_notify('agora_changes', '');
END $$;
