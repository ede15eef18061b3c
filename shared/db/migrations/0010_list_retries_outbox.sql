-- Lists (shared/lists): the caller's max_age, greylisted addresses retried later, and the callback outbox.
--
-- max_age of POST /lists (seconds; null: any cached verdict still kept), passed to the engine by every chunk.
ALTER TABLE "verification_lists" ADD COLUMN "max_age_sec" integer;
--> statement-breakpoint
-- A distinct address whose probe was deferred (greylisting, a temporary 4xx) waits, unverified, until retry_at;
-- deferrals counts the deferrals so far (the backoff step) and first_deferred_at bounds the waiting by
-- VERIFY_LIST_RETRY_WINDOW_MS. retry_at is also moved forward while a retry probes it (a lease: a retry whose
-- worker dies is due again afterwards).
ALTER TABLE "verification_list_addresses" ADD COLUMN "retry_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "verification_list_addresses" ADD COLUMN "deferrals" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "verification_list_addresses" ADD COLUMN "first_deferred_at" timestamp with time zone;
--> statement-breakpoint
CREATE INDEX "verification_list_addresses_waiting_idx" ON "verification_list_addresses" ("list_id", "retry_at")
	WHERE "retry_at" IS NOT NULL AND NOT "verified";
--> statement-breakpoint
-- The outbox: a delivery written in the same transaction as the event it announces (a list ending) is handed to
-- the deliveries queue after the commit, and enqueued_at records that. Rows written by enqueueDelivery (which
-- enqueues at once) get now() by default; an outbox row is inserted with null, and the sweeper hands on the ones
-- a crash left behind.
ALTER TABLE "deliveries" ADD COLUMN "enqueued_at" timestamp with time zone DEFAULT now();
--> statement-breakpoint
CREATE INDEX "deliveries_unenqueued_idx" ON "deliveries" ("created_at") WHERE "enqueued_at" IS NULL;
