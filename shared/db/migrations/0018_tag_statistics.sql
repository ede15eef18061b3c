-- A tag's related tags and its all-time top answerers, kept exact as posts change so that reading them is an index
-- range whatever the site's size (issue 22): before, each read counted over the tag's newest questions. Maintained
-- by triggers in the write's own transaction, like the other counters (migrations 0002 and 0009); bulk loaders run
-- with triggers off and finish with agora_recount(), which rebuilds them.
--
-- tag_pairs: for each ordered pair of tags, the number of questions that have both.
-- tag_answerers: for each tag and author, the votes and number of their answers to the tag's questions.
-- An answer counts for a tag while both the answer and the question's tag exist; each trigger below adds or takes
-- away the contributions of the rows its statement changed, paired with the other table's rows as they are then.
-- Both sides lock the question's row first (the counters of migration 0002 already do, except for votes), so two
-- writers changing a question's tags and its answers see each other's commits. Rows that fall to zero are deleted.
-- Upserts lock rows in key order, so concurrent writers cannot deadlock on them.
CREATE TABLE tag_pairs (
  tag_id integer NOT NULL,
  other_tag_id integer NOT NULL,
  questions integer NOT NULL,
  PRIMARY KEY (tag_id, other_tag_id)
);
--> statement-breakpoint
CREATE INDEX tag_pairs_related_idx ON tag_pairs (tag_id, questions DESC, other_tag_id);
--> statement-breakpoint
CREATE TABLE tag_answerers (
  tag_id integer NOT NULL,
  author_id integer NOT NULL,
  score integer NOT NULL,
  answers integer NOT NULL,
  PRIMARY KEY (tag_id, author_id)
);
--> statement-breakpoint
CREATE INDEX tag_answerers_top_idx ON tag_answerers (tag_id, score DESC, answers DESC, author_id);
--> statement-breakpoint
-- The question_tags rows a statement added or removed (the transition table `changed`, under either trigger), paired
-- with the tags their questions keep besides.
CREATE FUNCTION agora_question_tags_statistics() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sign integer := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
BEGIN
  WITH kept AS (
    SELECT qt.question_id, qt.tag_id FROM question_tags qt
    WHERE qt.question_id IN (SELECT question_id FROM changed)
      AND (qt.question_id, qt.tag_id) NOT IN (SELECT question_id, tag_id FROM changed)
  ), pairs AS (
    -- Pairs with at least one changed side: changed × changed and changed × kept, in both orders.
    SELECT x.tag_id, y.tag_id AS other_tag_id FROM changed x
    JOIN changed y ON y.question_id = x.question_id AND y.tag_id <> x.tag_id
    UNION ALL SELECT x.tag_id, k.tag_id FROM changed x JOIN kept k ON k.question_id = x.question_id
    UNION ALL SELECT k.tag_id, x.tag_id FROM changed x JOIN kept k ON k.question_id = x.question_id
  )
  INSERT INTO tag_pairs AS p (tag_id, other_tag_id, questions)
  SELECT tag_id, other_tag_id, sign * count(*) FROM pairs GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tag_id, other_tag_id) DO UPDATE SET questions = p.questions + EXCLUDED.questions;

  INSERT INTO tag_answerers AS t (tag_id, author_id, score, answers)
  SELECT c.tag_id, a.author_id, sign * sum(a.votes), sign * count(*)
  FROM changed c JOIN answers a ON a.question_id = c.question_id
  GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tag_id, author_id) DO UPDATE SET score = t.score + EXCLUDED.score, answers = t.answers + EXCLUDED.answers;

  IF sign < 0 THEN
    DELETE FROM tag_pairs WHERE questions <= 0
      AND (tag_id IN (SELECT tag_id FROM changed) OR other_tag_id IN (SELECT tag_id FROM changed));
    DELETE FROM tag_answerers WHERE answers <= 0 AND tag_id IN (SELECT tag_id FROM changed);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER question_tags_statistics_added AFTER INSERT ON question_tags
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agora_question_tags_statistics();
--> statement-breakpoint
CREATE TRIGGER question_tags_statistics_removed AFTER DELETE ON question_tags
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agora_question_tags_statistics();
--> statement-breakpoint
-- One answer's contribution to each tag of its question, added (answers 1, its votes) or taken away.
CREATE FUNCTION agora_tag_answerers_add(question integer, author integer, score_delta integer, answers_delta integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- A vote changes an answer without touching its question: the lock orders it with a change of the question's tags.
  PERFORM 1 FROM questions WHERE id = question FOR SHARE;
  INSERT INTO tag_answerers AS t (tag_id, author_id, score, answers)
  SELECT qt.tag_id, author, score_delta, answers_delta FROM question_tags qt WHERE qt.question_id = question
  ORDER BY qt.tag_id
  ON CONFLICT (tag_id, author_id) DO UPDATE SET score = t.score + EXCLUDED.score, answers = t.answers + EXCLUDED.answers;
  IF answers_delta < 0 THEN
    DELETE FROM tag_answerers WHERE author_id = author AND answers <= 0
      AND tag_id IN (SELECT tag_id FROM question_tags WHERE question_id = question);
  END IF;
END $$;
--> statement-breakpoint
CREATE FUNCTION agora_answers_tag_answerers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.question_id = OLD.question_id AND NEW.author_id = OLD.author_id THEN
    IF NEW.votes <> OLD.votes THEN
      PERFORM agora_tag_answerers_add(NEW.question_id, NEW.author_id, NEW.votes - OLD.votes, 0);
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM agora_tag_answerers_add(OLD.question_id, OLD.author_id, -OLD.votes, -1);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM agora_tag_answerers_add(NEW.question_id, NEW.author_id, NEW.votes, 1);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER answers_tag_answerers AFTER INSERT OR DELETE OR UPDATE OF votes, author_id, question_id ON answers
  FOR EACH ROW EXECUTE FUNCTION agora_answers_tag_answerers();
--> statement-breakpoint
-- A question's deletion cascades to its answers and its tags, and PostgreSQL fires the triggers of those cascades when
-- the whole statement is done, when neither side sees the other any more: the question's answers are taken away
-- from its tags before it goes. (Its tag pairs need no such step: they are counted within question_tags.)
CREATE FUNCTION agora_questions_tag_answerers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tag_answerers AS t (tag_id, author_id, score, answers)
  SELECT qt.tag_id, a.author_id, -sum(a.votes), -count(*)
  FROM question_tags qt JOIN answers a ON a.question_id = qt.question_id
  WHERE qt.question_id = OLD.id
  GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tag_id, author_id) DO UPDATE SET score = t.score + EXCLUDED.score, answers = t.answers + EXCLUDED.answers;
  DELETE FROM tag_answerers WHERE answers <= 0
    AND tag_id IN (SELECT tag_id FROM question_tags WHERE question_id = OLD.id);
  RETURN OLD;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_tag_answerers BEFORE DELETE ON questions
  FOR EACH ROW EXECUTE FUNCTION agora_questions_tag_answerers();
--> statement-breakpoint
-- Both tables rebuilt from the rows, after a bulk load that ran without triggers.
CREATE FUNCTION agora_recount_tag_statistics() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- DELETE, not TRUNCATE: readers of a live site keep the old counts until the load commits, instead of waiting.
  DELETE FROM tag_pairs;
  DELETE FROM tag_answerers;
  INSERT INTO tag_pairs (tag_id, other_tag_id, questions)
  SELECT x.tag_id, y.tag_id, count(*) FROM question_tags x
  JOIN question_tags y ON y.question_id = x.question_id AND y.tag_id <> x.tag_id
  GROUP BY 1, 2;
  INSERT INTO tag_answerers (tag_id, author_id, score, answers)
  SELECT qt.tag_id, a.author_id, sum(a.votes), count(*) FROM question_tags qt
  JOIN answers a ON a.question_id = qt.question_id
  GROUP BY 1, 2;
END $$;
--> statement-breakpoint
SELECT agora_recount_tag_statistics();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agora_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agora_recount_counters();
  PERFORM agora_recount_read_scale();
  PERFORM agora_recount_qa_reads();
  PERFORM agora_recount_tag_statistics();
  PERFORM pg_notify('agora_changes', '');
END $$;
