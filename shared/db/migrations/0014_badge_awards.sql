-- Each badge a user earned (Stack Exchange's Badges.xml, the demo seed): the timeline lists them and
-- GET /users/{id}/badges pages them. users.badge_gold/silver/bronze stay the per-class counts; the loaders that
-- write awards set them from this table in the same transaction (shared/db/repositories/badge-awards.ts).
-- Imported awards keep the dump's ids, so a re-import updates them in place instead of adding them twice.
CREATE TABLE "badge_awards" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	"name" text NOT NULL,
	"class" text NOT NULL,
	"tag_based" boolean DEFAULT false NOT NULL,
	-- The question or answer the badge was earned for, when the source says (ids are the dump's, which questions
	-- and answers share); no foreign key, as it may name either table or a post that was not imported.
	"post_id" integer,
	"awarded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "badge_awards_class_check" CHECK ("class" IN ('gold', 'silver', 'bronze')),
	CONSTRAINT "badge_awards_name_check" CHECK (length("name") BETWEEN 1 AND 200)
);
--> statement-breakpoint
-- A user's awards newest first: their timeline branch and their badge list, a range at any depth.
CREATE INDEX "badge_awards_user_idx" ON "badge_awards" ("user_id", "awarded_at" DESC, "id" DESC);
--> statement-breakpoint
-- The site's badges by name (GET /badges): one index-only group per name.
CREATE INDEX "badge_awards_name_idx" ON "badge_awards" ("name", "class", "tag_based");
--> statement-breakpoint
-- A webhook delivery queued or waiting for a retry when its subscription is disabled settles as 'cancelled'
-- instead of being sent (shared/db/repositories/deliveries.ts startAttempt); redeliver sends it again.
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_state_check";
--> statement-breakpoint
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_state_check"
	CHECK ("state" IN ('pending', 'delivered', 'failed', 'cancelled'));
