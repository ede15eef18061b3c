-- The recount inserts tag statistics in primary-key order: a hash aggregate hands its groups out in no order, and
-- each row then lands on a random page of the primary key's B-tree; in key order the index grows at its right edge,
-- which on a large site more than pays for the sort (docs/benchmarks.md, "Seeding and importing").
CREATE OR REPLACE FUNCTION agora_recount_tag_statistics() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- DELETE, not TRUNCATE: readers of a live site keep the old counts until the load commits, instead of waiting.
  DELETE FROM tag_pairs;
  DELETE FROM tag_answerers;
  INSERT INTO tag_pairs (tag_id, other_tag_id, questions)
  SELECT x.tag_id, y.tag_id, count(*) FROM question_tags x
  JOIN question_tags y ON y.question_id = x.question_id AND y.tag_id <> x.tag_id
  GROUP BY 1, 2 ORDER BY 1, 2;
  INSERT INTO tag_answerers (tag_id, author_id, score, answers)
  SELECT qt.tag_id, a.author_id, sum(a.votes), count(*) FROM question_tags qt
  JOIN answers a ON a.question_id = qt.question_id
  GROUP BY 1, 2 ORDER BY 1, 2;
END $$;
