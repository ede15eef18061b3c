-- The generic plan of a search's user-name branch (migration 0016) must not walk the primary key. Not knowing the
-- text, the planner assumes thousands of users match, so that the newest 200 matches lie a few thousand rows down
-- the primary key; for a text that matches few or no names (most search words) the walk reads every user: 1.1 s of
-- PostgreSQL per search at 250,000 users. Without plain index scans the only plans left read the trigram and
-- prefix indexes as bitmaps, whose cost is bounded by the names that match (a few ms; about 80 ms for a text in
-- 12,000 names). Parallel workers are left out too: starting them costs more than such a query, and a busy server
-- has no core to spare for them.
ALTER FUNCTION agora_user_name_candidates(text, int)
  SET enable_indexscan = off
  SET enable_seqscan = off
  SET max_parallel_workers_per_gather = 0;
