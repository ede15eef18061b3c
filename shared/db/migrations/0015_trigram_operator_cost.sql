-- pg_trgm declares the function behind `<%` (word_similarity_op: does a name contain a word like the search
-- text?) as cheap as an equality, though each call computes trigram similarities. Believing that, the planner of a
-- search's user-name branch scanned every user of a small site (30 ms at 5,000 users) or walked the primary key
-- over thousands of them (45 ms for a common first name at 25,000) instead of using the trigram indexes (under a
-- millisecond). Declaring its real cost makes the indexes win. Where the migrating role does not own the
-- extension's functions (a managed server's trusted extension), the declaration is skipped with a notice and
-- searches keep working with the planner's old choices.
DO $$
BEGIN
  ALTER FUNCTION word_similarity_op(text, text) COST 100;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'word_similarity_op cost left as it is: %', SQLERRM;
END
$$;
