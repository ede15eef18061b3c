-- Asynchronous verification lists (POST /lists of the verification service): a list, its uploaded rows and its
-- distinct addresses. PostgreSQL holds the whole truth of a list's progress; the BullMQ jobs that process it can
-- be lost (a crash, a Redis restart) and are re-created from these tables by the sweeper.
CREATE TABLE "verification_lists" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	-- The key whose budget was charged (a cancel refunds it).
	"key_id" integer NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"unique_count" integer DEFAULT 0 NOT NULL,
	-- Rows with a result, and distinct addresses verified.
	"processed" integer DEFAULT 0 NOT NULL,
	"probed" integer DEFAULT 0 NOT NULL,
	"valid_count" integer DEFAULT 0 NOT NULL,
	"invalid_count" integer DEFAULT 0 NOT NULL,
	"risky_count" integer DEFAULT 0 NOT NULL,
	"unknown_count" integer DEFAULT 0 NOT NULL,
	-- Header of an uploaded CSV (null for a JSON list), so the CSV results keep the uploaded columns.
	"columns" jsonb,
	"callback_url" text,
	"idempotency_key" text,
	-- Points charged, and when each budget window charged ended ({"hour": epoch ms, "day": epoch ms}).
	"charged" integer DEFAULT 0 NOT NULL,
	"charge_windows" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	CONSTRAINT "verification_lists_status_check"
		CHECK ("status" IN ('queued', 'running', 'completed', 'cancelled', 'failed'))
);--> statement-breakpoint
CREATE UNIQUE INDEX "verification_lists_idempotency_key" ON "verification_lists" ("user_id", "idempotency_key")
	WHERE "idempotency_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "verification_lists_user_idx" ON "verification_lists" ("user_id", "created_at" DESC, "id" DESC);--> statement-breakpoint
CREATE INDEX "verification_lists_active_idx" ON "verification_lists" ("status")
	WHERE "status" IN ('queued', 'running');--> statement-breakpoint

-- One row per uploaded entry, in input order; its result is written once (UPDATE ... WHERE result IS NULL).
CREATE TABLE "verification_list_rows" (
	"list_id" text NOT NULL REFERENCES "verification_lists"("id") ON DELETE CASCADE,
	"row" integer NOT NULL,
	-- The address as results echo it (trimmed, NFC), and the key duplicates share (domain compared in lower case).
	"email" text NOT NULL,
	"address" text NOT NULL,
	-- The uploaded cells of a CSV row (a JSON array of strings); null for a JSON list.
	"fields" jsonb,
	"result" jsonb,
	CONSTRAINT "verification_list_rows_pkey" PRIMARY KEY ("list_id", "row")
);--> statement-breakpoint
CREATE INDEX "verification_list_rows_address_idx" ON "verification_list_rows" ("list_id", "address");--> statement-breakpoint

-- The distinct addresses of a list: each is verified once, by the chunk job that claimed it.
CREATE TABLE "verification_list_addresses" (
	"list_id" text NOT NULL REFERENCES "verification_lists"("id") ON DELETE CASCADE,
	"address" text NOT NULL,
	"email" text NOT NULL,
	"domain" text NOT NULL,
	"chunk" integer,
	"verified" boolean DEFAULT false NOT NULL,
	CONSTRAINT "verification_list_addresses_pkey" PRIMARY KEY ("list_id", "address")
);--> statement-breakpoint
CREATE INDEX "verification_list_addresses_unclaimed_idx" ON "verification_list_addresses" ("list_id", "domain", "address")
	WHERE "chunk" IS NULL;--> statement-breakpoint
CREATE INDEX "verification_list_addresses_pending_idx" ON "verification_list_addresses" ("list_id", "chunk")
	WHERE NOT "verified";
