import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';

/**
 * The deliveries and their log (migration 0006, shared/delivery). A delivery row is written once per enqueue; a job
 * (first run, retry or the run that takes over from a dead worker) only counts attempts on it, so a retried job
 * never makes a second row.
 */

/** `cancelled`: a webhook delivery whose subscription was disabled before it was sent (redeliver resumes it). */
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface NewDelivery {
  id: string;
  subject: string;
  event: string;
  url: string;
  secret: string;
  body: string;
  maxAttempts: number;
  backoffMs: number;
}

/** What an attempt needs, read when it starts. */
export interface StartedAttempt {
  attempt: number;
  url: string;
  secret: string;
  event: string;
  body: string;
}

export interface DeliveryStatusRow {
  id: string;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  /** ISO 8601, UTC. */
  delivered_at: string | null;
}

export function deliveriesRepository(database: Database) {
  return {
    async insert(d: NewDelivery): Promise<void> {
      await database.query(sql`
        INSERT INTO deliveries (id, subject, event, url, secret, body, max_attempts, backoff_ms)
        VALUES (${d.id}, ${d.subject}, ${d.event}, ${d.url}, ${d.secret}, ${d.body}, ${d.maxAttempts}, ${d.backoffMs})`);
    },

    async remove(id: string): Promise<void> {
      await database.query(sql`DELETE FROM deliveries WHERE id = ${id}`);
    },

    /**
     * Counts and logs a new attempt of a pending delivery in `round`; null when there is nothing to do (delivered,
     * given up, redelivered since the job was enqueued, or unknown), `cancelled` when its webhook subscription is
     * disabled. The check is made here, at each attempt, so that a delivery queued or waiting for a retry when its
     * subscription is disabled (by its owner, or after WEBHOOK_DISABLE_AFTER_FAILURES) is not sent again: it
     * settles as `cancelled` with no attempt logged. Pings (sent enabled or not) and explicit redeliveries
     * (round > 0) are the owner's own requests and go out regardless. List callbacks have no subscription.
     */
    async startAttempt(id: string, round: number): Promise<StartedAttempt | 'cancelled' | null> {
      const [row] = await database.query<Record<string, unknown>>(sql`
        WITH cancelled AS (
          UPDATE deliveries d SET state = 'cancelled', failed_at = now(), last_error = 'subscription disabled'
          WHERE d.id = ${id} AND d.round = ${round} AND d.state = 'pending' AND d.round = 0 AND d.event <> 'ping'
            AND EXISTS (SELECT 1 FROM webhook_subscriptions w
                        WHERE d.subject = 'webhook:' || w.id AND w.disabled_at IS NOT NULL)
          RETURNING d.id
        ), started AS (
          UPDATE deliveries SET attempts = attempts + 1
          WHERE id = ${id} AND round = ${round} AND state = 'pending' AND NOT EXISTS (SELECT 1 FROM cancelled)
          RETURNING id, attempts, url, secret, event, body
        ), logged AS (
          INSERT INTO delivery_attempts (delivery_id, attempt) SELECT id, attempts FROM started
        )
        SELECT false AS cancelled, attempts AS attempt, url, secret, event, body FROM started
        UNION ALL SELECT true, null, null, null, null, null FROM cancelled`);
      if (!row) return null;
      if (row.cancelled) return 'cancelled';
      const { cancelled: _, ...started } = row;
      return started as unknown as StartedAttempt;
    },

    /** Completes an attempt's log entry and moves the delivery to `state` (pending while retries remain). */
    async finishAttempt(
      id: string,
      round: number,
      attempt: number,
      outcome: { status: number | null; error: string | null; state: DeliveryState },
    ): Promise<void> {
      const { status, error, state } = outcome;
      await database.query(sql`
        WITH logged AS (
          UPDATE delivery_attempts SET finished_at = now(), status = ${status}, error = ${error}
          WHERE delivery_id = ${id} AND attempt = ${attempt}
        )
        UPDATE deliveries SET
          last_status = ${status},
          last_error = ${error},
          state = ${state},
          delivered_at = CASE WHEN ${state} = 'delivered' THEN now() END,
          failed_at = CASE WHEN ${state} = 'failed' THEN now() END
        WHERE id = ${id} AND round = ${round} AND state = 'pending'`);
    },

    /** The latest delivery for a subject. */
    async latestForSubject(subject: string): Promise<DeliveryStatusRow | null> {
      const [row] = await database.query<Record<string, unknown>>(sql`
        SELECT id, state, attempts, last_status,
          -- Formatted here: the drivers disagree on how a timestamptz comes back (Date, or text in PGlite).
          to_char(delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS delivered_at
        FROM deliveries
        WHERE subject = ${subject} ORDER BY created_at DESC, id DESC LIMIT 1`);
      return (row as DeliveryStatusRow | undefined) ?? null;
    },

    /**
     * Puts a finished delivery (delivered or failed) back to pending for a new round of attempts: the round and the
     * delivery's schedule, or null when it is unknown or still pending (its own job is still trying it).
     */
    async reopen(id: string): Promise<{ round: number; maxAttempts: number; backoffMs: number } | null> {
      const [row] = await database.query<{ round: number; max_attempts: number; backoff_ms: number }>(sql`
        UPDATE deliveries SET state = 'pending', round = round + 1, delivered_at = NULL, failed_at = NULL
        WHERE id = ${id} AND state <> 'pending'
        RETURNING round, max_attempts, backoff_ms`);
      return row ? { round: row.round, maxAttempts: row.max_attempts, backoffMs: row.backoff_ms } : null;
    },

    async exists(id: string): Promise<boolean> {
      const rows = await database.query(sql`SELECT 1 FROM deliveries WHERE id = ${id}`);
      return rows.length > 0;
    },

    /** Gives up a round whose job could not be enqueued, so that the delivery can be redelivered again. */
    async abandonRound(id: string, round: number, error: string): Promise<void> {
      await database.query(sql`
        UPDATE deliveries SET state = 'failed', failed_at = now(), last_error = ${error}
        WHERE id = ${id} AND round = ${round} AND state = 'pending'`);
    },
  };
}
