import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { preparedQuery } from '../prepared.js';

export interface SiteTotals {
  questions: number;
  answers: number;
  comments: number;
  users: number;
  unanswered: number;
  /** Questions with an accepted answer ÷ questions (0 without questions). */
  accepted_rate: number;
}

export interface DayActivity {
  /** A UTC day, YYYY-MM-DD. */
  date: string;
  questions: number;
  answers: number;
  comments: number;
}

/** The number of days GET /info reports activity for, today (UTC) included. */
export const ACTIVITY_DAYS = 30;

/**
 * Site totals and daily activity, all from counters kept by triggers (migrations 0009, 0011): no row is counted.
 * Each statement has one best plan whatever its values, so PostgreSQL may keep it (reusable plans, prepared.ts).
 */
export function siteInfoRepository(db: Db) {
  return {
    async totals(): Promise<SiteTotals> {
      const [row] = await preparedQuery<Omit<SiteTotals, 'accepted_rate'> & { accepted: number }>(
        db,
        sql`SELECT coalesce(max(n) FILTER (WHERE scope = 'questions'), 0)::int AS questions,
                   coalesce(max(n) FILTER (WHERE scope = 'answers'), 0)::int AS answers,
                   coalesce(max(n) FILTER (WHERE scope = 'comments'), 0)::int AS comments,
                   coalesce(max(n) FILTER (WHERE scope = 'users'), 0)::int AS users,
                   coalesce(max(n) FILTER (WHERE scope = 'questions:unanswered'), 0)::int AS unanswered,
                   coalesce(max(n) FILTER (WHERE scope = 'questions:accepted'), 0)::int AS accepted
            FROM list_counts
            WHERE scope IN ('questions', 'answers', 'comments', 'users', 'questions:unanswered', 'questions:accepted')`,
        { plans: 'reusable' },
      );
      const { accepted, ...totals } = row!;
      const rate = totals.questions > 0 ? accepted / totals.questions : 0;
      return { ...totals, accepted_rate: Math.round(rate * 10_000) / 10_000 };
    },

    /** The last ACTIVITY_DAYS UTC days, oldest first, every day present (0 when nothing was posted). */
    async activity(): Promise<DayActivity[]> {
      return preparedQuery<DayActivity>(
        db,
        sql`SELECT to_char(d, 'YYYY-MM-DD') AS date,
                   coalesce((SELECT n FROM list_counts WHERE scope = 'day:' || to_char(d, 'YYYY-MM-DD') || ':questions'), 0)::int AS questions,
                   coalesce((SELECT n FROM list_counts WHERE scope = 'day:' || to_char(d, 'YYYY-MM-DD') || ':answers'), 0)::int AS answers,
                   coalesce((SELECT n FROM list_counts WHERE scope = 'day:' || to_char(d, 'YYYY-MM-DD') || ':comments'), 0)::int AS comments
            FROM generate_series(${ACTIVITY_DAYS - 1}::int, 0, -1) AS back(i),
                 LATERAL (SELECT (now() AT TIME ZONE 'UTC')::date - back.i AS d) day
            ORDER BY back.i DESC`,
        { plans: 'reusable' },
      );
    },

    /** The newest question's and answer's ids (their date indexes), undefined on an empty site. */
    async newest(): Promise<{ question?: number; answer?: number }> {
      const [row] = await preparedQuery<{ question: number | null; answer: number | null }>(
        db,
        sql`SELECT (SELECT id FROM questions ORDER BY created_at DESC NULLS LAST, id DESC NULLS LAST LIMIT 1) AS question,
                   (SELECT id FROM answers ORDER BY created_at DESC NULLS LAST, id DESC NULLS LAST LIMIT 1) AS answer`,
        { plans: 'reusable' },
      );
      return { question: row?.question ?? undefined, answer: row?.answer ?? undefined };
    },
  };
}
