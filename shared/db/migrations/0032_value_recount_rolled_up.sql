-- agora_recount_values (migration 0029) expanded every row of the counted tables into its five keys before grouping.
-- The same counts from one grouping of the rows at the finest level (a value's rows per block of ids), each coarser
-- level summed from the values' counts (docs/benchmarks.md, Seeding).
CREATE OR REPLACE FUNCTION agora_recount_values() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM value_counts;
  INSERT INTO value_counts (list, level, bucket, block, n)
  WITH blocks AS MATERIALIZED (
    SELECT r.list, r.value, r.id >> 12 AS block, count(*) AS n
    FROM (SELECT l.list, l.value, q.id FROM questions q, agora_question_value_lists(q.votes, q.views, q.category_id) l
          UNION ALL SELECT 'answers:votes', votes, id FROM answers
          UNION ALL SELECT 'comments:votes', votes, id FROM comments
          UNION ALL SELECT 'users:reputation', reputation, id FROM users) r
    GROUP BY 1, 2, 3),
  vals AS MATERIALIZED (SELECT list, value, sum(n) AS n FROM blocks GROUP BY 1, 2)
  SELECT list, 4::smallint, value, block, n FROM blocks
  UNION ALL SELECT list, 3::smallint, value, 0, n FROM vals
  UNION ALL SELECT list, 2::smallint, value >> 8, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 1::smallint, value >> 16, 0, sum(n) FROM vals GROUP BY 1, 3
  UNION ALL SELECT list, 0::smallint, value >> 24, 0, sum(n) FROM vals GROUP BY 1, 3
  ORDER BY 1, 2, 3, 4;
END $$;
