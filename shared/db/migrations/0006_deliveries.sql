-- Outbound deliveries (list callbacks, Q&A webhooks): shared/delivery. Each API key signs what is sent to it with a
-- secret of its own. The secret must be readable to sign, so it is stored in clear (unlike the key, only hashed);
-- existing keys get one here. gen_random_uuid() is core PostgreSQL (pgcrypto is not installed): two of them give
-- 244 random bits. Keys created by the application get 256 bits from node:crypto (shared/access/admin.ts).
CREATE FUNCTION agora_new_webhook_secret() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT 'whsec_' || replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
$$;
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "webhook_secret" text DEFAULT agora_new_webhook_secret() NOT NULL;
--> statement-breakpoint
-- One row per enqueued delivery. body is the exact JSON text sent (text, not jsonb: every attempt signs the same
-- bytes). round counts redeliveries: a job carries the round it was enqueued for, and a job of an older round
-- does nothing. attempts counts the HTTP attempts started (an attempt cut short by a dying worker included).
CREATE TABLE "deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"subject" text NOT NULL,
	"event" text NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"body" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL CHECK ("state" IN ('pending', 'delivered', 'failed')),
	"round" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"backoff_ms" integer NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	"failed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "deliveries_subject_idx" ON "deliveries" USING btree ("subject", "created_at" DESC);
--> statement-breakpoint
-- The delivery log: one row per HTTP attempt, written when it starts and completed when it ends (an attempt whose
-- worker died keeps finished_at null).
CREATE TABLE "delivery_attempts" (
	"delivery_id" uuid NOT NULL REFERENCES "deliveries"("id") ON DELETE CASCADE,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"status" integer,
	"error" text,
	PRIMARY KEY ("delivery_id", "attempt")
);
