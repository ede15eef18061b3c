import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { seekPage, type PaginationWithCursor, type SeekOrder, type SeekParams } from './seek.js';

/** Q&A webhook subscriptions and what the dispatcher has sent them (migration 0012, shared/webhooks). */

export interface SubscriptionRow extends Record<string, unknown> {
  id: number;
  url: string;
  events: string[];
  tags: string[];
  enabled: boolean;
  consecutive_failures: number;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryLogRow extends Record<string, unknown> {
  id: string;
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** What the dispatcher needs of a subscription. */
export interface Target extends Record<string, unknown> {
  id: number;
  url: string;
  secret: string;
}

const iso = (column: string) =>
  sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
const COLUMNS = sql`id, url, events, tags, disabled_at IS NULL AS enabled, consecutive_failures,
  ${iso('disabled_at')} AS disabled_at, disabled_reason, ${iso('created_at')} AS created_at,
  ${iso('updated_at')} AS updated_at`;

// Newest first on (subject, created_at DESC) of migration 0006; the uuid decides ties.
const DELIVERIES_NEWEST: SeekOrder = {
  direction: 'desc',
  keys: [
    { expr: sql`deliveries.created_at`, type: 'timestamptz' },
    { expr: sql`deliveries.id`, type: 'uuid' },
  ],
};

/** A text[] parameter (the drivers differ on arrays; a literal is read the same by both). */
export const textArray = (values: readonly string[]): string =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

/** Webhook deliveries are made with this subject, which the attempt trigger of migration 0012 reads. */
export const webhookSubject = (subscriptionId: number): string => `webhook:${subscriptionId}`;

export function webhooksRepository(database: Database) {
  return {
    async create(s: { userId: number; url: string; events: string[]; tags: string[] }) {
      const [row] = await database.query<SubscriptionRow & { secret: string }>(sql`
        INSERT INTO webhook_subscriptions (user_id, url, events, tags, since_seq)
        VALUES (${s.userId}, ${s.url}, ${textArray(s.events)}::text[], ${textArray(s.tags)}::text[],
          (SELECT last_seq FROM qa_change_counter))
        RETURNING ${COLUMNS}, secret`);
      return row!;
    },

    async count(userId: number): Promise<number> {
      const [row] = await database.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE user_id = ${userId}`,
      );
      return row!.n;
    },

    async list(userId: number): Promise<SubscriptionRow[]> {
      return database.query<SubscriptionRow>(
        sql`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE user_id = ${userId} ORDER BY id`,
      );
    },

    /** Every subscription, disabled ones first (the admin panel). */
    async all(limit: number): Promise<Array<SubscriptionRow & { username: string }>> {
      return database.query(sql`
        SELECT ${COLUMNS}, (SELECT username FROM users WHERE users.id = s.user_id) AS username
        FROM webhook_subscriptions s ORDER BY disabled_at IS NULL, id DESC LIMIT ${limit}`);
    },

    async find(userId: number, id: number): Promise<SubscriptionRow | null> {
      const [row] = await database.query<SubscriptionRow>(
        sql`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = ${id} AND user_id = ${userId}`,
      );
      return row ?? null;
    },

    async target(userId: number, id: number): Promise<Target | null> {
      const [row] = await database.query<Target>(
        sql`SELECT id, url, secret FROM webhook_subscriptions WHERE id = ${id} AND user_id = ${userId}`,
      );
      return row ?? null;
    },

    /** Changes the given fields; `enabled: true` also ends the run of failures that disabled it. */
    async update(
      userId: number,
      id: number,
      changes: { url?: string; events?: string[]; tags?: string[]; enabled?: boolean },
    ): Promise<SubscriptionRow | null> {
      const sets = [sql`updated_at = now()`];
      if (changes.url !== undefined) sets.push(sql`url = ${changes.url}`);
      if (changes.events !== undefined) sets.push(sql`events = ${textArray(changes.events)}::text[]`);
      if (changes.tags !== undefined) sets.push(sql`tags = ${textArray(changes.tags)}::text[]`);
      if (changes.enabled === true)
        sets.push(sql`disabled_at = NULL, disabled_reason = NULL, consecutive_failures = 0`);
      if (changes.enabled === false)
        sets.push(
          sql`disabled_at = coalesce(disabled_at, now()), disabled_reason = coalesce(disabled_reason, 'disabled by its owner')`,
        );
      const [row] = await database.query<SubscriptionRow>(sql`
        UPDATE webhook_subscriptions SET ${sql.join(sets, sql`, `)}
        WHERE id = ${id} AND user_id = ${userId} RETURNING ${COLUMNS}`);
      return row ?? null;
    },

    async remove(userId: number, id: number): Promise<boolean> {
      const rows = await database.query(
        sql`DELETE FROM webhook_subscriptions WHERE id = ${id} AND user_id = ${userId} RETURNING 1`,
      );
      return rows.length > 0;
    },

    /** Enabled subscriptions to `event` of a change at `seq` (created before it) whose tag filter lets it through. */
    async subscribers(event: string, seq: number, tags: string[]): Promise<Target[]> {
      return database.query<Target>(sql`
        SELECT id, url, secret FROM webhook_subscriptions
        WHERE disabled_at IS NULL AND ${event} = ANY(events) AND since_seq < ${seq}
          AND (tags = '{}' OR tags && ${textArray(tags)}::text[])
        ORDER BY id`);
    },

    async wasSent(subscriptionId: number, seq: number): Promise<boolean> {
      const rows = await database.query(
        sql`SELECT 1 FROM webhook_sent WHERE subscription_id = ${subscriptionId} AND change_seq = ${seq}`,
      );
      return rows.length > 0;
    },

    async dispatchedThrough(): Promise<number> {
      const [row] = await database.query<{ last_seq: string }>(
        sql`SELECT last_seq::text AS last_seq FROM webhook_dispatch`,
      );
      return Number(row!.last_seq);
    },

    async setDispatchedThrough(seq: number): Promise<void> {
      await database.query(sql`UPDATE webhook_dispatch SET last_seq = greatest(last_seq, ${seq})`);
    },

    /** Disables the subscriptions whose failed attempts in a row reached `limit`; returns their ids. */
    async disableFailing(limit: number): Promise<number[]> {
      const rows = await database.query<{ id: number }>(sql`
        UPDATE webhook_subscriptions
        SET disabled_at = now(), disabled_reason = ${`${limit} delivery attempts in a row failed`}
        WHERE disabled_at IS NULL AND consecutive_failures >= ${limit} RETURNING id`);
      return rows.map((r) => r.id);
    },

    /**
     * One page of a subscription's deliveries, newest first (ties: id), by cursor or page number (seek.ts), with
     * the subscription's total.
     */
    async deliveries(
      subscriptionId: number,
      params: SeekParams,
    ): Promise<{ deliveries: DeliveryLogRow[]; pagination: PaginationWithCursor }> {
      const subject = webhookSubject(subscriptionId);
      const [count] = await database.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM deliveries WHERE subject = ${subject}`,
      );
      const { items, pagination } = await seekPage<DeliveryLogRow>(
        database.db,
        {
          list: JSON.stringify(['deliveries', subscriptionId]),
          columns: sql`deliveries.id::text AS id, event, state, attempts, last_status, last_error,
            ${iso('deliveries.created_at')} AS created_at, ${iso('delivered_at')} AS delivered_at`,
          from: sql`deliveries`,
          where: sql`subject = ${subject}`,
          order: DELIVERIES_NEWEST,
          total: count!.n,
        },
        params,
      );
      return { deliveries: items, pagination };
    },

    async deliveryBelongs(subscriptionId: number, deliveryId: string): Promise<boolean> {
      const rows = await database.query(
        sql`SELECT 1 FROM deliveries WHERE id = ${deliveryId}::uuid AND subject = ${webhookSubject(subscriptionId)}`,
      );
      return rows.length > 0;
    },
  };
}
