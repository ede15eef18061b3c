-- GET /answers (issue 19 item 5: the answer list with Stack Exchange's windows): the site's answers by votes, an
-- index range in that order at any depth, as comments_votes_idx (0011) serves /comments?sort=votes. By date the list
-- walks answers_newest_idx (0011).
CREATE INDEX answers_votes_idx ON answers (votes DESC NULLS LAST, id DESC NULLS LAST);
