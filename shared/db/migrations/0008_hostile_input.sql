-- Names sort case-insensitively and by a real collation, whatever the database's own collation is (C.UTF-8 sorts
-- "AHM" before "Aadit M Shah"). agora_names is ICU's root collation where ICU is built in (PostgreSQL packages),
-- and a copy of "C" where it is not (PGlite), where lower() still makes the order case-insensitive.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'agora_names') THEN
    IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
      CREATE COLLATION agora_names (provider = icu, locale = 'und');
    ELSE
      CREATE COLLATION agora_names FROM "C";
    END IF;
  END IF;
END
$$;--> statement-breakpoint
DROP INDEX IF EXISTS "users_name_idx";--> statement-breakpoint
CREATE INDEX "users_name_idx" ON "users" USING btree ((lower("display_name") COLLATE agora_names), "id");--> statement-breakpoint
-- The Markdown source of posts written through the API (content holds its sanitised HTML rendering); NULL for
-- imported posts, whose source is HTML.
ALTER TABLE "questions" ADD COLUMN IF NOT EXISTS "content_markdown" text;--> statement-breakpoint
ALTER TABLE "answers" ADD COLUMN IF NOT EXISTS "content_markdown" text;--> statement-breakpoint
ALTER TABLE "comments" ADD COLUMN IF NOT EXISTS "content_markdown" text;
