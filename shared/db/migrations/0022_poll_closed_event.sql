-- poll.closed fires with the final tally: the first recount at or after the poll's closing time (the polls worker's
-- `close` job runs it), once. It used to fire on a poll's first tally, moments after its first vote, while open.
CREATE OR REPLACE FUNCTION agora_polls_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.closed_at IS NOT NULL AND NEW.tallied_at >= NEW.closed_at
     AND (OLD.tallied_at IS NULL OR OLD.tallied_at < NEW.closed_at) THEN
    PERFORM agora_record_change('poll', NEW.id, 'upsert', 'poll.closed', NEW.question_id, NULL);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE INDEX polls_closing_idx ON polls (closed_at, id) WHERE closed_at IS NOT NULL;
