-- Full-text search: weighted title (A) > tags (B) > body (C). Bodies may be HTML (imported dumps), so tags
-- are stripped first; only a bounded prefix is indexed to keep vectors small.
CREATE FUNCTION agora_plain_text(body text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN left(regexp_replace(body, '<[^>]*>', ' ', 'g'), 100000);
--> statement-breakpoint
-- array_to_string is only STABLE; tag names are plain text, so this wrapper is safely IMMUTABLE.
CREATE FUNCTION agora_tag_text(names text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_to_string(names, ' ');
--> statement-breakpoint
ALTER TABLE questions ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', title), 'A') ||
  setweight(to_tsvector('english', agora_tag_text(tag_names)), 'B') ||
  setweight(to_tsvector('english', agora_plain_text(content)), 'C')
) STORED;
--> statement-breakpoint
ALTER TABLE answers ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  to_tsvector('english', agora_plain_text(content))
) STORED;
--> statement-breakpoint
CREATE INDEX questions_search_idx ON questions USING gin (search_vector);
--> statement-breakpoint
CREATE INDEX answers_search_idx ON answers USING gin (search_vector);
--> statement-breakpoint
CREATE INDEX question_tags_tag_question_desc_idx ON question_tags (tag_id, question_id DESC);
--> statement-breakpoint

-- Maintained counters. Triggers keep them right whatever path writes (API, seed, importer, admin); bulk
-- loaders switch triggers off (session_replication_role = replica) and call agora_recount() instead.
CREATE FUNCTION agora_answers_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE questions SET answers_count = answers_count + 1,
      has_accepted = has_accepted OR NEW.is_accepted WHERE id = NEW.question_id;
    UPDATE users SET answers_count = answers_count + 1 WHERE id = NEW.author_id;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE questions SET answers_count = answers_count - 1,
      has_accepted = has_accepted AND NOT OLD.is_accepted WHERE id = OLD.question_id;
    UPDATE users SET answers_count = answers_count - 1 WHERE id = OLD.author_id;
  ELSIF NEW.is_accepted IS DISTINCT FROM OLD.is_accepted THEN
    UPDATE questions SET has_accepted = EXISTS (
      SELECT 1 FROM answers WHERE question_id = NEW.question_id AND is_accepted
    ) WHERE id = NEW.question_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER answers_counters AFTER INSERT OR DELETE OR UPDATE OF is_accepted ON answers
  FOR EACH ROW EXECUTE FUNCTION agora_answers_counters();
--> statement-breakpoint
CREATE FUNCTION agora_questions_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    IF TG_OP = 'INSERT' THEN
      UPDATE users SET questions_count = questions_count + 1 WHERE id = NEW.author_id;
    END IF;
    IF NEW.category_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.category_id IS DISTINCT FROM OLD.category_id) THEN
      UPDATE categories SET questions_count = questions_count + 1 WHERE id = NEW.category_id;
    END IF;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    IF TG_OP = 'DELETE' THEN
      UPDATE users SET questions_count = questions_count - 1 WHERE id = OLD.author_id;
    END IF;
    IF OLD.category_id IS NOT NULL AND (TG_OP = 'DELETE' OR NEW.category_id IS DISTINCT FROM OLD.category_id) THEN
      UPDATE categories SET questions_count = questions_count - 1 WHERE id = OLD.category_id;
    END IF;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_counters AFTER INSERT OR DELETE OR UPDATE OF category_id ON questions
  FOR EACH ROW EXECUTE FUNCTION agora_questions_counters();
--> statement-breakpoint
CREATE FUNCTION agora_question_tags_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE tags SET questions_count = questions_count + 1 WHERE id = NEW.tag_id;
    UPDATE questions SET tag_names = array_append(tag_names, (SELECT name FROM tags WHERE id = NEW.tag_id))
      WHERE id = NEW.question_id;
  ELSE
    UPDATE tags SET questions_count = questions_count - 1 WHERE id = OLD.tag_id;
    UPDATE questions SET tag_names = array_remove(tag_names, (SELECT name FROM tags WHERE id = OLD.tag_id))
      WHERE id = OLD.question_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER question_tags_counters AFTER INSERT OR DELETE ON question_tags
  FOR EACH ROW EXECUTE FUNCTION agora_question_tags_counters();
--> statement-breakpoint
CREATE FUNCTION agora_votes_counters() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := COALESCE(CASE WHEN TG_OP <> 'DELETE' THEN NEW.value END, 0)
                 - COALESCE(CASE WHEN TG_OP <> 'INSERT' THEN OLD.value END, 0);
  question_target integer := CASE WHEN TG_OP = 'DELETE' THEN OLD.question_id ELSE NEW.question_id END;
  answer_target integer := CASE WHEN TG_OP = 'DELETE' THEN OLD.answer_id ELSE NEW.answer_id END;
BEGIN
  IF delta = 0 THEN RETURN NULL; END IF;
  IF question_target IS NOT NULL THEN
    UPDATE questions SET votes = votes + delta WHERE id = question_target;
  ELSE
    UPDATE answers SET votes = votes + delta WHERE id = answer_target;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER votes_counters AFTER INSERT OR DELETE OR UPDATE OF value ON votes
  FOR EACH ROW EXECUTE FUNCTION agora_votes_counters();
--> statement-breakpoint

-- Recomputes every maintained counter from the rows; used after bulk loads that ran without triggers.
CREATE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE questions q SET
    answers_count = COALESCE(a.n, 0), has_accepted = COALESCE(a.accepted, false)
  FROM (SELECT q2.id, count(a2.id) AS n, bool_or(a2.is_accepted) AS accepted
        FROM questions q2 LEFT JOIN answers a2 ON a2.question_id = q2.id GROUP BY q2.id) a
  WHERE a.id = q.id AND (q.answers_count, q.has_accepted) IS DISTINCT FROM (COALESCE(a.n, 0), COALESCE(a.accepted, false));
  UPDATE questions q SET tag_names = COALESCE(t.names, '{}')
  FROM (SELECT q2.id, array_agg(tg.name ORDER BY tg.name) FILTER (WHERE tg.id IS NOT NULL) AS names
        FROM questions q2 LEFT JOIN question_tags qt ON qt.question_id = q2.id LEFT JOIN tags tg ON tg.id = qt.tag_id
        GROUP BY q2.id) t
  WHERE t.id = q.id AND q.tag_names IS DISTINCT FROM COALESCE(t.names, '{}')
    AND NOT (q.tag_names @> COALESCE(t.names, '{}') AND q.tag_names <@ COALESCE(t.names, '{}'));
  UPDATE questions q SET votes = COALESCE(v.s, 0)
  FROM (SELECT q2.id, sum(v2.value) AS s FROM questions q2 LEFT JOIN votes v2 ON v2.question_id = q2.id GROUP BY q2.id) v
  WHERE v.id = q.id AND q.votes IS DISTINCT FROM COALESCE(v.s, 0);
  UPDATE answers a SET votes = COALESCE(v.s, 0)
  FROM (SELECT a2.id, sum(v2.value) AS s FROM answers a2 LEFT JOIN votes v2 ON v2.answer_id = a2.id GROUP BY a2.id) v
  WHERE v.id = a.id AND a.votes IS DISTINCT FROM COALESCE(v.s, 0);
  UPDATE users u SET questions_count = COALESCE(c.qn, 0), answers_count = COALESCE(c.an, 0)
  FROM (SELECT u2.id,
          (SELECT count(*) FROM questions WHERE author_id = u2.id) AS qn,
          (SELECT count(*) FROM answers WHERE author_id = u2.id) AS an
        FROM users u2) c
  WHERE c.id = u.id AND (u.questions_count, u.answers_count) IS DISTINCT FROM (c.qn, c.an);
  UPDATE tags t SET questions_count = COALESCE(c.n, 0)
  FROM (SELECT t2.id, count(qt.question_id) AS n FROM tags t2 LEFT JOIN question_tags qt ON qt.tag_id = t2.id GROUP BY t2.id) c
  WHERE c.id = t.id AND t.questions_count IS DISTINCT FROM COALESCE(c.n, 0);
  UPDATE categories k SET questions_count = COALESCE(c.n, 0)
  FROM (SELECT k2.id, count(q.id) AS n FROM categories k2 LEFT JOIN questions q ON q.category_id = k2.id GROUP BY k2.id) c
  WHERE c.id = k.id AND k.questions_count IS DISTINCT FROM COALESCE(c.n, 0);
END $$;
