-- Reads whose cost does not grow with the data (issue 22): exact list totals from counters kept in the write's own
-- transaction, and indexes that give a tag's or a category's questions in every sort order, so that a page is a seek
-- on an index rather than a count or a scan of every question.

-- Totals of the lists that have no counter of their own (tags.questions_count and categories.questions_count already
-- count a tag's and a category's questions). A scope is a list's name: 'questions', 'questions:unanswered', 'users',
-- 'tags', 'tag:<id>:unanswered', 'category:<id>:unanswered'. Each write adds its delta in its own transaction, from
-- triggers deferred to commit: the row lock on a busy counter ('questions') is then taken last and held only while
-- the transaction commits, so writers queue on it briefly, cannot deadlock against the locks their other statements
-- take, and the total is exact at every committed state.
CREATE TABLE list_counts (
  scope text PRIMARY KEY,
  n bigint NOT NULL DEFAULT 0
);
--> statement-breakpoint
CREATE FUNCTION agora_count_add(list_scope text, delta integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO list_counts AS c (scope, n) VALUES (list_scope, delta)
  ON CONFLICT (scope) DO UPDATE SET n = c.n + EXCLUDED.n;
$$;
--> statement-breakpoint

-- A tag's questions in every sort order: the question's sort keys are kept on question_tags (filled before each
-- insert, followed on every change of the question), each order with its own (tag_id, key, question_id) index.
ALTER TABLE question_tags
  ADD COLUMN created_at timestamp with time zone NOT NULL DEFAULT '-infinity',
  ADD COLUMN votes integer NOT NULL DEFAULT 0,
  ADD COLUMN views integer NOT NULL DEFAULT 0,
  ADD COLUMN answers_count integer NOT NULL DEFAULT 0;
--> statement-breakpoint
UPDATE question_tags qt SET created_at = q.created_at, votes = q.votes, views = q.views, answers_count = q.answers_count
FROM questions q WHERE q.id = qt.question_id;
--> statement-breakpoint
CREATE INDEX question_tags_newest_idx ON question_tags (tag_id, created_at DESC NULLS LAST, question_id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX question_tags_votes_idx ON question_tags (tag_id, votes DESC NULLS LAST, question_id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX question_tags_views_idx ON question_tags (tag_id, views DESC NULLS LAST, question_id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX question_tags_unanswered_idx ON question_tags (tag_id, created_at DESC NULLS LAST, question_id DESC NULLS LAST)
  WHERE answers_count = 0;
--> statement-breakpoint
-- A category's questions in the sorts that questions_category_newest_idx (0001) does not give.
CREATE INDEX questions_category_votes_idx ON questions (category_id, votes DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX questions_category_views_idx ON questions (category_id, views DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX questions_category_unanswered_idx ON questions (category_id, created_at DESC NULLS LAST, id DESC NULLS LAST)
  WHERE answers_count = 0;
--> statement-breakpoint

CREATE FUNCTION agora_question_tags_sort_keys() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  q record;
BEGIN
  SELECT created_at, votes, views, answers_count INTO q FROM questions WHERE id = NEW.question_id;
  -- A bulk loader may write a batch of question_tags before the batch of its questions: agora_recount() fills those.
  IF FOUND THEN
    NEW.created_at := q.created_at;
    NEW.votes := q.votes;
    NEW.views := q.views;
    NEW.answers_count := q.answers_count;
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER question_tags_sort_keys BEFORE INSERT ON question_tags
  FOR EACH ROW EXECUTE FUNCTION agora_question_tags_sort_keys();
--> statement-breakpoint
-- Also under session_replication_role = replica (bulk loads): one index lookup per row as it is written is far
-- cheaper than agora_recount() rewriting every question_tags row after the load.
ALTER TABLE question_tags ENABLE ALWAYS TRIGGER question_tags_sort_keys;
--> statement-breakpoint
-- A tag's unanswered total follows its rows' own answers_count, so it stays right when the question is deleted
-- (question_tags rows then go by cascade, after the question row is gone).
CREATE FUNCTION agora_question_tags_list_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.answers_count = 0 THEN
    PERFORM agora_count_add('tag:' || OLD.tag_id || ':unanswered', -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.answers_count = 0 THEN
    PERFORM agora_count_add('tag:' || NEW.tag_id || ':unanswered', 1);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER question_tags_list_counts AFTER INSERT OR DELETE ON question_tags
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_question_tags_list_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER question_tags_list_counts_update AFTER UPDATE OF answers_count ON question_tags
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN ((OLD.answers_count = 0) IS DISTINCT FROM (NEW.answers_count = 0))
  EXECUTE FUNCTION agora_question_tags_list_counts();
--> statement-breakpoint

CREATE FUNCTION agora_questions_list_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM agora_count_add('questions', 1);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM agora_count_add('questions', -1);
  END IF;
  -- The unanswered lists: take the old row's share out, put the new row's in (a no-op pair when nothing moved).
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.answers_count = 0 THEN
    PERFORM agora_count_add('questions:unanswered', -1);
    IF OLD.category_id IS NOT NULL THEN
      PERFORM agora_count_add('category:' || OLD.category_id || ':unanswered', -1);
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.answers_count = 0 THEN
    PERFORM agora_count_add('questions:unanswered', 1);
    IF NEW.category_id IS NOT NULL THEN
      PERFORM agora_count_add('category:' || NEW.category_id || ':unanswered', 1);
    END IF;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_list_counts AFTER INSERT OR DELETE ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_questions_list_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER questions_list_counts_update AFTER UPDATE OF answers_count, category_id ON questions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN ((OLD.answers_count = 0) IS DISTINCT FROM (NEW.answers_count = 0)
        OR OLD.category_id IS DISTINCT FROM NEW.category_id)
  EXECUTE FUNCTION agora_questions_list_counts();
--> statement-breakpoint
-- The sort keys follow the question at once (not deferred): a read later in the same transaction sees them.
CREATE FUNCTION agora_questions_sort_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE question_tags SET created_at = NEW.created_at, votes = NEW.votes, views = NEW.views,
                           answers_count = NEW.answers_count
    WHERE question_id = NEW.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_sort_keys AFTER UPDATE OF created_at, votes, views, answers_count ON questions
  FOR EACH ROW
  WHEN ((NEW.created_at, NEW.votes, NEW.views, NEW.answers_count)
        IS DISTINCT FROM (OLD.created_at, OLD.votes, OLD.views, OLD.answers_count))
  EXECUTE FUNCTION agora_questions_sort_keys();
--> statement-breakpoint

CREATE FUNCTION agora_rows_list_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_count_add(TG_TABLE_NAME, CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER users_list_counts AFTER INSERT OR DELETE ON users
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_rows_list_counts();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER tags_list_counts AFTER INSERT OR DELETE ON tags
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_rows_list_counts();
--> statement-breakpoint

-- Bulk loads (triggers off) and TRUNCATE bypass the triggers above: agora_recount() recomputes all of it.
CREATE FUNCTION agora_recount_read_scale() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE question_tags qt SET created_at = q.created_at, votes = q.votes, views = q.views, answers_count = q.answers_count
  FROM questions q
  WHERE q.id = qt.question_id
    AND (qt.created_at, qt.votes, qt.views, qt.answers_count) IS DISTINCT FROM (q.created_at, q.votes, q.views, q.answers_count);
  DELETE FROM list_counts;
  INSERT INTO list_counts (scope, n)
  SELECT 'questions', count(*) FROM questions
  UNION ALL SELECT 'questions:unanswered', count(*) FROM questions WHERE answers_count = 0
  UNION ALL SELECT 'users', count(*) FROM users
  UNION ALL SELECT 'tags', count(*) FROM tags
  UNION ALL SELECT 'category:' || category_id || ':unanswered', count(*) FROM questions
            WHERE answers_count = 0 AND category_id IS NOT NULL GROUP BY category_id
  UNION ALL SELECT 'tag:' || tag_id || ':unanswered', count(*) FROM question_tags WHERE answers_count = 0 GROUP BY tag_id;
END $$;
--> statement-breakpoint
SELECT agora_recount_read_scale();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM pg_notify('agora_changes', '');
END $$;
