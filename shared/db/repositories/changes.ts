import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';

/**
 * The change feed's table (migration 0012): rows written by triggers in the writing transaction and numbered in
 * commit order at commit. Only numbered rows are ever visible to another session.
 */

export const FEED_TYPES = ['question', 'answer', 'comment', 'user'] as const;
export type FeedType = (typeof FEED_TYPES)[number];

export interface ChangeRow extends Record<string, unknown> {
  seq: number;
  type: FeedType;
  id: number;
  op: 'upsert' | 'delete';
  /** ISO 8601, UTC. */
  at: string;
}

export interface ChangesPage {
  changes: ChangeRow[];
  /** The last seq handed out, as of the page's snapshot: every change up to it is committed and visible. */
  lastSeq: number;
  /** Changes up to this seq have been pruned. */
  prunedThrough: number;
}

/** A committed change that fires a webhook event. */
export interface EventRow extends Record<string, unknown> {
  seq: number;
  type: 'question' | 'answer' | 'comment' | 'poll';
  id: number;
  event: string;
  question_id: number | null;
  /** The question's tags: its current ones, or those it had when it was deleted. */
  tags: string[];
  at: string;
}

/** Milliseconds, as every other timestamp of the API (the feed's order is its seq, not this). */
const iso = (column: string) =>
  sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export function changesRepository(database: Database) {
  return {
    /** Changes after `since` of the given types, in seq order, with the counter read in the same snapshot. */
    async page(options: { since: number; types: readonly FeedType[]; limit: number }): Promise<ChangesPage> {
      const { since, types, limit } = options;
      // One statement, so one snapshot: the counter and the rows agree.
      const [row] = await database.query<{
        changes: ChangeRow[] | null;
        last_seq: string;
        pruned: string;
      }>(sql`
        SELECT
          (SELECT json_agg(p ORDER BY p.seq) FROM (
             SELECT seq, type, entity_id AS id, op, ${iso('at')} AS at
             FROM qa_changes
             WHERE seq > ${since} AND type = ANY(${`{${types.join(',')}}`}::text[])
             ORDER BY seq LIMIT ${limit}
           ) p) AS changes,
          last_seq::text AS last_seq, pruned_through::text AS pruned
        FROM qa_change_counter`);
      return {
        changes: (row!.changes ?? []).map((c) => ({ ...c, seq: Number(c.seq) })),
        lastSeq: Number(row!.last_seq),
        prunedThrough: Number(row!.pruned),
      };
    },

    async lastSeq(): Promise<number> {
      const [row] = await database.query<{ last_seq: string }>(
        sql`SELECT last_seq::text AS last_seq FROM qa_change_counter`,
      );
      return Number(row!.last_seq);
    },

    /** Webhook events committed after `since`, oldest first. */
    async eventsAfter(since: number, limit: number): Promise<EventRow[]> {
      const rows = await database.query<EventRow>(sql`
        SELECT c.seq::text AS seq, c.type, c.entity_id AS id, c.event, c.question_id,
          coalesce(q.tag_names, c.tags, '{}') AS tags, ${iso('c.at')} AS at
        FROM qa_changes c LEFT JOIN questions q ON q.id = c.question_id
        WHERE c.seq > ${since} AND c.event IS NOT NULL
        ORDER BY c.seq LIMIT ${limit}`);
      return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
    },

    /**
     * Deletes the changes committed before `cutoffDays` ago (a prefix of the feed) and moves the expiry mark; returns
     * how many were deleted.
     */
    async prune(retentionDays: number): Promise<number> {
      const [row] = await database.query<{ deleted: number }>(sql`
        WITH horizon AS (
          SELECT max(seq) AS seq FROM qa_changes
          WHERE seq IS NOT NULL AND at < now() - make_interval(days => ${retentionDays})
        ), deleted AS (
          DELETE FROM qa_changes WHERE seq <= (SELECT seq FROM horizon) RETURNING 1
        ), marked AS (
          UPDATE qa_change_counter SET pruned_through = greatest(pruned_through, (SELECT seq FROM horizon))
          WHERE (SELECT seq FROM horizon) IS NOT NULL
        )
        SELECT count(*)::int AS deleted FROM deleted`);
      // Empty the read caches (migration 0004's channel): a cached feed page from before the prune would hand out a
      // cursor that has just expired, again and again until its TTL, to a client restarting the feed after a 410.
      if (row!.deleted > 0) await database.query(sql`SELECT pg_notify('agora_changes', '')`);
      return row!.deleted;
    },
  };
}
