import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { preparedQuery } from '../prepared.js';
import { iso, rows } from './pagination.js';

/** One tag with its counts (GET /tags/{slug}). */
export interface TagDetail {
  id: number;
  name: string;
  slug: string;
  description: string;
  questions_count: number;
  unanswered_count: number;
  created_at: string;
}

export interface RelatedTag {
  id: number;
  name: string;
  slug: string;
  questions_count: number;
  /** Questions that have both tags. */
  together: number;
}

export const TOP_ANSWERER_PERIODS = ['all_time', 'month'] as const;
export type TopAnswererPeriod = (typeof TOP_ANSWERER_PERIODS)[number];

export interface TopAnswerer {
  user: { id: number; username: string; display_name: string; avatar: string; reputation: number };
  answer_score: number;
  answer_count: number;
}

export function tagDetailsRepository(db: Db) {
  return {
    async find(slug: string): Promise<TagDetail | undefined> {
      const [row] = await preparedQuery<TagDetail>(
        db,
        sql`SELECT id, name, slug, description, questions_count,
                   coalesce((SELECT n FROM list_counts WHERE scope = 'tag:' || tags.id || ':unanswered'), 0)::int
                     AS unanswered_count,
                   ${iso(sql`created_at`)} AS created_at
            FROM tags WHERE slug = ${slug}`,
        { plans: 'reusable' },
      );
      return row;
    },

    /**
     * The tags that share questions with this one, most shared first, then tag id: a range of the pair counts kept
     * by migration 0018's triggers.
     */
    async related(tagId: number, limit: number): Promise<RelatedTag[]> {
      return rows<RelatedTag>(
        db,
        sql`SELECT t.id, t.name, t.slug, t.questions_count, p.questions AS together
            FROM (SELECT other_tag_id, questions FROM tag_pairs WHERE tag_id = ${tagId}
                  ORDER BY questions DESC, other_tag_id ASC LIMIT ${limit}) p
            JOIN tags t ON t.id = p.other_tag_id
            ORDER BY p.questions DESC, t.id ASC`,
      );
    },

    /**
     * Users by the score of their answers in the tag (then answer count, then user id). `all_time`: a range of the
     * per-author sums kept by migration 0018's triggers; `month`: answers posted in the last 30 days, summed from the
     * answers' date index.
     */
    async topAnswerers(tagId: number, period: TopAnswererPeriod, limit: number): Promise<TopAnswerer[]> {
      const authors =
        period === 'month'
          ? sql`SELECT author_id, sum(votes)::int AS answer_score, count(*)::int AS answer_count
                FROM (SELECT a.author_id, a.votes FROM answers a
                      JOIN question_tags qt ON qt.question_id = a.question_id AND qt.tag_id = ${tagId}
                      WHERE a.created_at >= now() - interval '30 days') a
                GROUP BY author_id`
          : sql`SELECT author_id, score AS answer_score, answers AS answer_count FROM tag_answerers
                WHERE tag_id = ${tagId}`;
      const found = await rows<{
        id: number;
        username: string;
        display_name: string;
        avatar: string;
        reputation: number;
        answer_score: number;
        answer_count: number;
      }>(
        db,
        // The page of authors is chosen before users are joined: joined first, PostgreSQL hashed every user of the
        // site to order all the tag's authors.
        sql`SELECT u.id, u.username, u.display_name, u.avatar, u.reputation, s.answer_score, s.answer_count
            FROM (SELECT * FROM (${authors}) a
                  ORDER BY answer_score DESC, answer_count DESC, author_id ASC LIMIT ${limit}) s
            JOIN users u ON u.id = s.author_id
            ORDER BY s.answer_score DESC, s.answer_count DESC, u.id ASC`,
      );
      return found.map(({ answer_score, answer_count, ...user }) => ({ user, answer_score, answer_count }));
    },
  };
}
