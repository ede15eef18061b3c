-- The change feed (GET /changes), the webhook outbox and post links (issue #19, docs/qa-api.md "Following changes").
--
-- Every change to a question, answer, comment, user or poll is recorded by the row triggers below, in the writing
-- transaction: a rolled-back write leaves no change, a committed one always has its row. A change gets its feed
-- number (seq) only at commit, from a deferred trigger that takes the one counter row's lock; the lock is held until
-- the transaction's commit is visible, so seqs are handed out in commit order and without holes: a reader that sees
-- seq n sees every seq below n, and no later commit can ever get a seq below one a reader has seen. The cost is that
-- the last instant of Q&A write transactions (numbering, then commit) is serialised.
--
-- Bulk loaders run with session_replication_role = replica, so none of these triggers fire on an import: the feed
-- reports what happens after it, not the dump.
CREATE TABLE "qa_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	-- Null while the writing transaction runs (no other session can see the row then); set at commit.
	"seq" bigint UNIQUE,
	"xid" xid8 DEFAULT pg_current_xact_id() NOT NULL,
	"type" text NOT NULL CHECK ("type" IN ('question', 'answer', 'comment', 'user', 'poll')),
	"entity_id" integer NOT NULL,
	"op" text NOT NULL CHECK ("op" IN ('upsert', 'delete')),
	-- The webhook event this change fires (question.created, answer.accepted, …), null for none.
	"event" text,
	-- The question a post or poll belongs to, for webhook tag filters; its tags when it was deleted.
	"question_id" integer,
	"tags" text[],
	-- When the change committed (set with its seq).
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "qa_changes_unnumbered_idx" ON "qa_changes" ("xid", "type", "entity_id") WHERE "seq" IS NULL;
--> statement-breakpoint
CREATE INDEX "qa_changes_events_idx" ON "qa_changes" ("seq") WHERE "event" IS NOT NULL;
--> statement-breakpoint
-- One row: the last seq handed out, and the last seq pruned (a cursor below it has expired: 410).
CREATE TABLE "qa_change_counter" (
	"singleton" boolean PRIMARY KEY DEFAULT true CHECK ("singleton"),
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"pruned_through" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO "qa_change_counter" DEFAULT VALUES;
--> statement-breakpoint
-- Records one change. Plain upserts are recorded once per entity and transaction (an answer insert also updates its
-- question's counters, a question's tags update it once per tag); event and delete rows are always recorded.
CREATE FUNCTION agora_record_change(
  change_type text, change_id integer, change_op text, change_event text, change_question integer, change_tags text[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF change_op = 'upsert' AND change_event IS NULL AND EXISTS (
    SELECT 1 FROM qa_changes
    WHERE xid = pg_current_xact_id() AND seq IS NULL AND type = change_type AND entity_id = change_id
  ) THEN
    RETURN;
  END IF;
  INSERT INTO qa_changes (type, entity_id, op, event, question_id, tags)
  VALUES (change_type, change_id, change_op, change_event, change_question, change_tags);
END $$;
--> statement-breakpoint
-- Numbers the transaction's changes in the order they were made, at commit (see the top of this file). Fired once
-- per change row; the first firing numbers them all and the others find nothing left.
CREATE FUNCTION agora_number_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  pending bigint;
  base bigint;
BEGIN
  SELECT count(*) INTO pending FROM qa_changes WHERE xid = pg_current_xact_id() AND seq IS NULL;
  IF pending = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE qa_change_counter SET last_seq = last_seq + pending RETURNING last_seq - pending INTO base;
  UPDATE qa_changes c SET seq = base + p.n, at = clock_timestamp()
  FROM (
    SELECT id, row_number() OVER (ORDER BY id) AS n
    FROM qa_changes WHERE xid = pg_current_xact_id() AND seq IS NULL
  ) p
  WHERE c.id = p.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER qa_changes_number AFTER INSERT ON qa_changes
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agora_number_changes();
--> statement-breakpoint
-- Questions: created, edited (the edit path sets updated_at; counters and tag bookkeeping do not), deleted. View
-- counts are not a change (they would flood the feed).
CREATE FUNCTION agora_questions_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM agora_record_change('question', NEW.id, 'upsert', 'question.created', NEW.id, NULL);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM agora_record_change('question', OLD.id, 'delete', 'post.deleted', OLD.id, OLD.tag_names);
  ELSIF (OLD.title, OLD.content, OLD.tag_names, OLD.category_id, OLD.votes, OLD.answers_count, OLD.has_accepted,
         OLD.author_id, OLD.updated_at)
        IS DISTINCT FROM
        (NEW.title, NEW.content, NEW.tag_names, NEW.category_id, NEW.votes, NEW.answers_count, NEW.has_accepted,
         NEW.author_id, NEW.updated_at) THEN
    PERFORM agora_record_change('question', NEW.id, 'upsert',
      CASE WHEN NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN 'question.edited' END, NEW.id, NULL);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER questions_change AFTER INSERT OR UPDATE OR DELETE ON questions
  FOR EACH ROW EXECUTE FUNCTION agora_questions_change();
--> statement-breakpoint
CREATE FUNCTION agora_answers_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM agora_record_change('answer', NEW.id, 'upsert', 'answer.created', NEW.question_id, NULL);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM agora_record_change('answer', OLD.id, 'delete', 'post.deleted', OLD.question_id,
      (SELECT tag_names FROM questions WHERE id = OLD.question_id));
  ELSIF NEW.is_accepted AND NOT OLD.is_accepted THEN
    PERFORM agora_record_change('answer', NEW.id, 'upsert', 'answer.accepted', NEW.question_id, NULL);
  ELSIF NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN
    PERFORM agora_record_change('answer', NEW.id, 'upsert', 'answer.edited', NEW.question_id, NULL);
  ELSIF (OLD.content, OLD.votes, OLD.is_accepted, OLD.question_id, OLD.author_id)
        IS DISTINCT FROM (NEW.content, NEW.votes, NEW.is_accepted, NEW.question_id, NEW.author_id) THEN
    PERFORM agora_record_change('answer', NEW.id, 'upsert', NULL, NEW.question_id, NULL);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER answers_change AFTER INSERT OR UPDATE OR DELETE ON answers
  FOR EACH ROW EXECUTE FUNCTION agora_answers_change();
--> statement-breakpoint
-- A comment's question: its own, or its answer's.
CREATE FUNCTION agora_comment_question(c comments) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT coalesce(c.question_id, (SELECT question_id FROM answers WHERE id = c.answer_id))
$$;
--> statement-breakpoint
CREATE FUNCTION agora_comments_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM agora_record_change('comment', NEW.id, 'upsert', 'comment.created', agora_comment_question(NEW), NULL);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM agora_record_change('comment', OLD.id, 'delete', 'comment.deleted', agora_comment_question(OLD),
      (SELECT tag_names FROM questions WHERE id = agora_comment_question(OLD)));
  ELSIF (OLD.content, OLD.votes) IS DISTINCT FROM (NEW.content, NEW.votes) THEN
    PERFORM agora_record_change('comment', NEW.id, 'upsert', NULL, agora_comment_question(NEW), NULL);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER comments_change AFTER INSERT OR UPDATE OR DELETE ON comments
  FOR EACH ROW EXECUTE FUNCTION agora_comments_change();
--> statement-breakpoint
CREATE FUNCTION agora_users_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM agora_record_change('user', OLD.id, 'delete', NULL, NULL, NULL);
  ELSIF TG_OP = 'INSERT' OR (OLD.username, OLD.display_name, OLD.avatar, OLD.bio, OLD.reputation, OLD.badge_gold,
         OLD.badge_silver, OLD.badge_bronze, OLD.questions_count, OLD.answers_count)
        IS DISTINCT FROM
        (NEW.username, NEW.display_name, NEW.avatar, NEW.bio, NEW.reputation, NEW.badge_gold,
         NEW.badge_silver, NEW.badge_bronze, NEW.questions_count, NEW.answers_count) THEN
    PERFORM agora_record_change('user', NEW.id, 'upsert', NULL, NULL, NULL);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER users_change AFTER INSERT OR UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION agora_users_change();
--> statement-breakpoint
-- Polls are not in the feed's types; their row only carries the poll.closed event (the tally is final).
CREATE FUNCTION agora_polls_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.tallied_at IS NOT NULL AND OLD.tallied_at IS NULL THEN
    PERFORM agora_record_change('poll', NEW.id, 'upsert', 'poll.closed', NEW.question_id, NULL);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER polls_change AFTER UPDATE OF tallied_at ON polls
  FOR EACH ROW EXECUTE FUNCTION agora_polls_change();
--> statement-breakpoint
-- Webhook subscriptions (POST /webhooks): owned by the key's user; secret shown once at creation.
CREATE TABLE "webhook_subscriptions" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	-- Empty: every question; otherwise only events of questions carrying one of these tags.
	"tags" text[] DEFAULT '{}' NOT NULL,
	"secret" text DEFAULT agora_new_webhook_secret() NOT NULL,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"disabled_at" timestamp with time zone,
	"disabled_reason" text,
	-- The first change this subscription may receive: the feed's last seq when it was created.
	"since_seq" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_user_idx" ON "webhook_subscriptions" ("user_id", "id");
--> statement-breakpoint
-- Which change each subscription has been sent: the dispatcher's guard against sending one twice.
CREATE TABLE "webhook_sent" (
	"subscription_id" integer NOT NULL REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE,
	"change_seq" bigint NOT NULL,
	"delivery_id" uuid NOT NULL,
	PRIMARY KEY ("subscription_id", "change_seq")
);
--> statement-breakpoint
-- How far the dispatcher has fanned the feed's events out to subscriptions.
CREATE TABLE "webhook_dispatch" (
	"singleton" boolean PRIMARY KEY DEFAULT true CHECK ("singleton"),
	"last_seq" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO "webhook_dispatch" DEFAULT VALUES;
--> statement-breakpoint
-- A run of failed attempts disables a subscription (the dispatcher applies WEBHOOK_DISABLE_AFTER_FAILURES); one
-- delivered attempt ends the run. Webhook deliveries have the subject "webhook:<subscription id>".
CREATE FUNCTION agora_webhook_attempt_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  subscription integer;
BEGIN
  SELECT substr(subject, 9)::integer INTO subscription FROM deliveries
  WHERE id = NEW.delivery_id AND subject ~ '^webhook:[0-9]{1,9}$';
  IF subscription IS NULL THEN
    RETURN NULL;
  END IF;
  IF NEW.status BETWEEN 200 AND 299 THEN
    UPDATE webhook_subscriptions SET consecutive_failures = 0 WHERE id = subscription AND consecutive_failures <> 0;
  ELSE
    UPDATE webhook_subscriptions SET consecutive_failures = consecutive_failures + 1 WHERE id = subscription;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER delivery_attempts_webhook_outcome AFTER UPDATE OF finished_at ON delivery_attempts
  FOR EACH ROW WHEN (OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL)
  EXECUTE FUNCTION agora_webhook_attempt_outcome();
--> statement-breakpoint
-- Links between questions (GET /questions/{id}/linked). A row per source: 'body' rows are the links in a question's
-- body and its answers' bodies, recomputed when one of them is written (shared/qa/links.ts); 'import' rows come from
-- a Stack Exchange dump's PostLinks.xml, whose LinkTypeId 3 marks a duplicate (kind 'duplicate'), 1 a plain link.
CREATE TABLE "post_links" (
	"question_id" integer NOT NULL REFERENCES "questions"("id") ON DELETE CASCADE,
	"related_question_id" integer NOT NULL REFERENCES "questions"("id") ON DELETE CASCADE,
	"source" text NOT NULL CHECK ("source" IN ('body', 'import')),
	"kind" text DEFAULT 'link' NOT NULL CHECK ("kind" IN ('link', 'duplicate')),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	PRIMARY KEY ("question_id", "related_question_id", "source"),
	CHECK ("question_id" <> "related_question_id")
);
--> statement-breakpoint
CREATE INDEX "post_links_related_idx" ON "post_links" ("related_question_id", "question_id");
--> statement-breakpoint
CREATE TRIGGER post_links_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON post_links
  FOR EACH STATEMENT EXECUTE FUNCTION agora_notify_change();
