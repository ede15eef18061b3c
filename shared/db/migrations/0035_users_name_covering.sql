-- The walk of a deep page of users by name (user-profiles.ts) selects only the sort key and the id, but the index on
-- lower(display_name) could not answer it alone: an expression's column must be in the index for an index-only
-- scan, so every entry skipped was also read from the table (183 ms for the middle of 250,000 users, 25 ms from the
-- index alone). The same index, with display_name carried in it.
CREATE INDEX users_name_covering_idx ON users ((lower(display_name) COLLATE agora_names), id) INCLUDE (display_name);
--> statement-breakpoint
DROP INDEX users_name_idx;
--> statement-breakpoint
ALTER INDEX users_name_covering_idx RENAME TO users_name_idx;
