-- Search ranks the most recent 200 matches of each kind (shared/db/repositories/search.ts), and the planner picks,
-- per word, between walking the primary key backwards (a common word: 200 matches come quickly) and the GIN index
-- (a rare one). It judges by the word's frequency in the column's statistics; a word outside the tracked lexemes
-- gets a floor estimate that, with the default target, made a rare word look common at 1M rows: the walk then read
-- the whole table (1.4 s instead of 27 ms). A larger target tracks ten times more lexemes, so rare words are
-- estimated as rare.
ALTER TABLE questions ALTER COLUMN search_vector SET STATISTICS 1000;
--> statement-breakpoint
ALTER TABLE answers ALTER COLUMN search_vector SET STATISTICS 1000;
--> statement-breakpoint
ANALYZE questions (search_vector);
--> statement-breakpoint
ANALYZE answers (search_vector);
