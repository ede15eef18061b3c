import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { iso, rows } from './pagination.js';
import { COUNT_BOUND } from './windows.js';

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
  /** Questions (of those considered) that have both tags. */
  together: number;
}

export const TOP_ANSWERER_PERIODS = ['all_time', 'month'] as const;
export type TopAnswererPeriod = (typeof TOP_ANSWERER_PERIODS)[number];

export interface TopAnswerer {
  user: { id: number; username: string; display_name: string; avatar: string; reputation: number };
  answer_score: number;
  answer_count: number;
}

/**
 * A tag's newest questions, at most COUNT_BOUND of them, from its question_tags index: the related tags and the
 * all-time top answerers are counted over these, so their cost is bounded whatever the tag's size; below the bound
 * (every tag of most sites) they are exact.
 */
const considered = (tagId: number) =>
  sql`(SELECT question_id FROM question_tags WHERE tag_id = ${tagId}
       ORDER BY created_at DESC NULLS LAST, question_id DESC NULLS LAST LIMIT ${COUNT_BOUND})`;

export function tagDetailsRepository(db: Db) {
  return {
    async find(slug: string): Promise<TagDetail | undefined> {
      const [row] = await rows<TagDetail>(
        db,
        sql`SELECT id, name, slug, description, questions_count,
                   coalesce((SELECT n FROM list_counts WHERE scope = 'tag:' || tags.id || ':unanswered'), 0)::int
                     AS unanswered_count,
                   ${iso(sql`created_at`)} AS created_at
            FROM tags WHERE slug = ${slug}`,
      );
      return row;
    },

    /** The tags that share questions with this one, most shared first, then tag id. */
    async related(tagId: number, limit: number): Promise<RelatedTag[]> {
      return rows<RelatedTag>(
        db,
        sql`SELECT t.id, t.name, t.slug, t.questions_count, count(*)::int AS together
            FROM ${considered(tagId)} s
            JOIN question_tags qt ON qt.question_id = s.question_id AND qt.tag_id <> ${tagId}
            JOIN tags t ON t.id = qt.tag_id
            GROUP BY t.id ORDER BY together DESC, t.id ASC LIMIT ${limit}`,
      );
    },

    /**
     * Users by the score of their answers in the tag (then answer count, then user id). `month`: answers posted in
     * the last 30 days (read from the answers' date index); `all_time`: answers to the tag's considered questions.
     */
    async topAnswerers(tagId: number, period: TopAnswererPeriod, limit: number): Promise<TopAnswerer[]> {
      const answers =
        period === 'month'
          ? sql`SELECT a.author_id, a.votes FROM answers a
                JOIN question_tags qt ON qt.question_id = a.question_id AND qt.tag_id = ${tagId}
                WHERE a.created_at >= now() - interval '30 days'`
          : sql`SELECT a.author_id, a.votes FROM ${considered(tagId)} s JOIN answers a ON a.question_id = s.question_id`;
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
            FROM (SELECT author_id, sum(votes)::int AS answer_score, count(*)::int AS answer_count
                  FROM (${answers}) a GROUP BY author_id
                  ORDER BY answer_score DESC, answer_count DESC, author_id ASC LIMIT ${limit}) s
            JOIN users u ON u.id = s.author_id
            ORDER BY s.answer_score DESC, s.answer_count DESC, u.id ASC`,
      );
      return found.map(({ answer_score, answer_count, ...user }) => ({ user, answer_score, answer_count }));
    },
  };
}
