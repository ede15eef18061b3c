import { sql } from 'drizzle-orm';
import { iso } from './pagination.js';

/** The short form of a question in related, linked and similar lists (alias `q` for questions). */
export interface QuestionSummary {
  id: number;
  title: string;
  slug: string;
  votes: number;
  answers_count: number;
  has_accepted: boolean;
  tags: string[];
  created_at: string;
}

export type SummaryRow = Omit<QuestionSummary, 'tags'> & { tag_names: string[] };

export const SUMMARY_COLUMNS = sql`q.id, q.title, q.slug, q.votes, q.answers_count, q.has_accepted, q.tag_names,
  ${iso(sql`q.created_at`)} AS created_at`;

export const toSummary = (r: SummaryRow): QuestionSummary => ({
  id: Number(r.id),
  title: r.title,
  slug: r.slug,
  votes: Number(r.votes),
  answers_count: Number(r.answers_count),
  has_accepted: Boolean(r.has_accepted),
  tags: r.tag_names,
  created_at: r.created_at,
});
