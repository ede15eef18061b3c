-- The search vectors of migration 0002 were generated columns: PostgreSQL computed to_tsvector for every row a
-- bulk loader wrote, most of a seed's database time, with no way for the loader to supply them. They become plain
-- columns (DROP EXPRESSION keeps the stored vectors and the indexes; no rewrite) filled by a BEFORE trigger with
-- the very expression the columns had, kept in one place as the functions below. API writes get the same vectors
-- as before. Bulk loaders run with triggers off (session_replication_role = replica) and must supply the vectors
-- themselves: the seed computes them in Node (shared/db/bulk/search-vectors.ts), the importer calls these functions.
CREATE FUNCTION agora_question_vector(title text, tag_names text[], content text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN setweight(to_tsvector('english', title), 'A') ||
         setweight(to_tsvector('english', agora_tag_text(tag_names)), 'B') ||
         setweight(to_tsvector('english', agora_plain_text(content)), 'C');
--> statement-breakpoint
CREATE FUNCTION agora_answer_vector(content text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN to_tsvector('english', agora_plain_text(content));
--> statement-breakpoint
ALTER TABLE questions ALTER COLUMN search_vector DROP EXPRESSION;
--> statement-breakpoint
ALTER TABLE answers ALTER COLUMN search_vector DROP EXPRESSION;
--> statement-breakpoint
CREATE FUNCTION agora_questions_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_vector := agora_question_vector(NEW.title, NEW.tag_names, NEW.content);
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_search_vector BEFORE INSERT OR UPDATE OF title, tag_names, content ON questions
  FOR EACH ROW EXECUTE FUNCTION agora_questions_search_vector();
--> statement-breakpoint
CREATE FUNCTION agora_answers_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_vector := agora_answer_vector(NEW.content);
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER answers_search_vector BEFORE INSERT OR UPDATE OF content ON answers
  FOR EACH ROW EXECUTE FUNCTION agora_answers_search_vector();
--> statement-breakpoint
-- agora_recount() (migration 0002's counting body, renamed agora_recount_counters by 0004) may rewrite a
-- question's tag_names after a load with triggers off; the trigger above does not fire there, so the same UPDATE
-- recomputes the vector. Otherwise unchanged.
CREATE OR REPLACE FUNCTION agora_recount_counters() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE questions q SET
    answers_count = COALESCE(a.n, 0), has_accepted = COALESCE(a.accepted, false)
  FROM (SELECT q2.id, count(a2.id) AS n, bool_or(a2.is_accepted) AS accepted
        FROM questions q2 LEFT JOIN answers a2 ON a2.question_id = q2.id GROUP BY q2.id) a
  WHERE a.id = q.id AND (q.answers_count, q.has_accepted) IS DISTINCT FROM (COALESCE(a.n, 0), COALESCE(a.accepted, false));
  UPDATE questions q SET tag_names = COALESCE(t.names, '{}'),
    search_vector = agora_question_vector(q.title, COALESCE(t.names, '{}'), q.content)
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
