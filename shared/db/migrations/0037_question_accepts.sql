-- A user's timeline lists the accepts on their questions, newest first (user-activity.ts). The accept's time is the
-- answer's, so no index gave a question author's accepts in time order: the branch joined every accepted question of
-- the user and sorted them all. A question now carries its accepted answer and the time it was accepted, kept in the
-- same UPDATE as has_accepted, and one partial index gives an author's accepts in the timeline's order.
ALTER TABLE questions ADD COLUMN accepted_answer_id integer, ADD COLUMN accepted_at timestamp with time zone;
--> statement-breakpoint
UPDATE questions q SET accepted_answer_id = a.id, accepted_at = a.accepted_at
FROM answers a WHERE a.question_id = q.id AND a.is_accepted;
--> statement-breakpoint
CREATE INDEX questions_author_accepts_idx
  ON questions (author_id, accepted_at DESC NULLS LAST, accepted_answer_id DESC NULLS LAST)
  WHERE accepted_at IS NOT NULL;
--> statement-breakpoint
-- Only the timeline's former branch read it.
DROP INDEX questions_author_accepted_idx;
--> statement-breakpoint
-- As 0002's, with the accepted answer and its time written beside has_accepted. A change of an existing answer reads
-- the question's accepted answer back from the answers, so an accept that moves (one cleared, one set) ends right in
-- either order.
CREATE OR REPLACE FUNCTION agora_answers_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE questions SET answers_count = answers_count + 1,
      has_accepted = has_accepted OR NEW.is_accepted,
      accepted_answer_id = CASE WHEN NEW.is_accepted THEN NEW.id ELSE accepted_answer_id END,
      accepted_at = CASE WHEN NEW.is_accepted THEN NEW.accepted_at ELSE accepted_at END
    WHERE id = NEW.question_id;
    UPDATE users SET answers_count = answers_count + 1 WHERE id = NEW.author_id;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE questions SET answers_count = answers_count - 1,
      has_accepted = has_accepted AND NOT OLD.is_accepted,
      accepted_answer_id = CASE WHEN OLD.is_accepted THEN NULL ELSE accepted_answer_id END,
      accepted_at = CASE WHEN OLD.is_accepted THEN NULL ELSE accepted_at END
    WHERE id = OLD.question_id;
    UPDATE users SET answers_count = answers_count - 1 WHERE id = OLD.author_id;
  ELSIF (NEW.is_accepted, NEW.accepted_at) IS DISTINCT FROM (OLD.is_accepted, OLD.accepted_at) THEN
    UPDATE questions q SET (has_accepted, accepted_answer_id, accepted_at) = (
      SELECT count(*) > 0, max(a.id), max(a.accepted_at) FROM answers a
      WHERE a.question_id = NEW.question_id AND a.is_accepted
    ) WHERE q.id = NEW.question_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- An accept time set by hand (as a test or an operator may) is followed too.
DROP TRIGGER answers_counters ON answers;
--> statement-breakpoint
CREATE TRIGGER answers_counters AFTER INSERT OR DELETE OR UPDATE OF is_accepted, accepted_at ON answers
  FOR EACH ROW EXECUTE FUNCTION agora_answers_counters();
--> statement-breakpoint
-- Bulk loads write the columns with the rows (the seed's generator, the importer); this puts right what they did not.
-- After agora_recount_qa_reads, which gives accepted answers without a time their creation's.
CREATE FUNCTION agora_recount_accepts() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE questions q SET accepted_answer_id = a.answer_id, accepted_at = a.accepted_at
  FROM (SELECT q2.id, a2.id AS answer_id, a2.accepted_at
        FROM questions q2 LEFT JOIN answers a2 ON a2.question_id = q2.id AND a2.is_accepted) a
  WHERE a.id = q.id AND (q.accepted_answer_id, q.accepted_at) IS DISTINCT FROM (a.answer_id, a.accepted_at);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_accepts();
  PERFORM agora_recount_tag_statistics();
  PERFORM agora_recount_list_days();
  PERFORM agora_recount_dated();
  PERFORM agora_recount_values();
  PERFORM pg_notify('agora_changes', '');
END $$;
