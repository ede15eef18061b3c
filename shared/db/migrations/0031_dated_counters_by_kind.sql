-- The day anchors (seek.ts, dayAnchor) read one kind's months, then one month's days of that kind. list_counts names
-- them 'month:<YYYY-MM>:<kind>' and 'day:<YYYY-MM-DD>:<kind>', so on its primary key a kind's months are spread among
-- every other kind's (each category adds two kinds since 0030): these indexes put each kind's months and days in one
-- range, in date order.
CREATE INDEX list_counts_months_by_kind ON list_counts (substr(scope, 15), scope COLLATE "C") WHERE scope LIKE 'month:%';
--> statement-breakpoint
CREATE INDEX list_counts_days_by_kind ON list_counts (substr(scope, 16), scope COLLATE "C") WHERE scope LIKE 'day:%';
