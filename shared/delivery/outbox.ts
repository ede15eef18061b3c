import { sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queues/producer.js';
import { enqueueRound, prepareDelivery, type DeliveryRequest } from './deliveries.js';

/**
 * The outbox of deliveries: a delivery written in the same transaction as the change it announces (a list ending),
 * so that the two commit or vanish together, then handed to the deliveries queue after the commit. enqueued_at
 * (migration 0010) says it was handed over; a crash between the commit and the hand-over leaves it null, and
 * handOverPending (run by the list sweeper) hands it on. A delivery handed over twice is still sent once: the job
 * id is deterministic (delivery-<id>-0, a no-op while that job exists) and an attempt only runs on a pending
 * delivery of its round (deliveries repository, startAttempt).
 *
 * A delivery handed over can still lose its job: Redis restarted without its data (or failed over to a replica
 * that had not received it) while the job waited for its next attempt. A pending delivery whose next attempt is
 * long overdue is handed over again under the same job id, a no-op while its job exists.
 */

type Executor = Pick<Db, 'execute'>;
type RawResult = unknown[] | { rows: unknown[] };
const rowsOf = async <T>(db: Executor, statement: ReturnType<typeof sql>): Promise<T[]> => {
  const result = (await db.execute(statement)) as RawResult;
  return (Array.isArray(result) ? result : result.rows) as T[];
};

// A pending hand-over younger than this is presumably still on its way from the process that committed it.
export const OUTBOX_GRACE_MS = 2000;
// A delivery's next attempt this late past its backoff (doubled, for the jitter) means its job is gone.
const OVERDUE_SLACK_MS = 10 * 60_000;

/** Writes the delivery in the caller's transaction, not yet enqueued; returns its id. Throws as enqueueDelivery. */
export async function recordDelivery(tx: Executor, request: DeliveryRequest): Promise<string> {
  const { body, schedule } = prepareDelivery(request);
  const id = randomUUID();
  await rowsOf(
    tx,
    sql`INSERT INTO deliveries (id, subject, event, url, secret, body, max_attempts, backoff_ms, enqueued_at)
        VALUES (${id}, ${request.subject}, ${request.event}, ${request.url}, ${request.secret}, ${body},
                ${schedule.attempts}, ${schedule.backoffMs}, NULL)`,
  );
  return id;
}

export interface OutboxDeps {
  database: { db: Executor };
  queues: Pick<Queues, 'enqueue'>;
}

/** Enqueues the first round of a recorded delivery and marks it handed over. */
export async function handOver(deps: OutboxDeps, deliveryId: string): Promise<void> {
  const [row] = await rowsOf<{ max_attempts: number; backoff_ms: number }>(
    deps.database.db,
    sql`SELECT max_attempts, backoff_ms FROM deliveries WHERE id = ${deliveryId}`,
  );
  if (!row) return; // deleted with its subject meanwhile
  await enqueueRound(deps.queues, deliveryId, 0, {
    attempts: row.max_attempts,
    backoffMs: row.backoff_ms,
  });
  await rowsOf(
    deps.database.db,
    sql`UPDATE deliveries SET enqueued_at = now() WHERE id = ${deliveryId} AND enqueued_at IS NULL`,
  );
}

/** Hands over every recorded delivery left un-enqueued for longer than `graceMs`; returns how many. */
export async function handOverPending(
  deps: OutboxDeps & { logger: Logger },
  graceMs = OUTBOX_GRACE_MS,
): Promise<number> {
  const rows = await rowsOf<{ id: string }>(
    deps.database.db,
    sql`SELECT id FROM deliveries
        WHERE enqueued_at IS NULL AND created_at < now() - ${graceMs} * interval '1 millisecond'
        ORDER BY created_at LIMIT 1000`,
  );
  for (const { id } of rows) await handOver(deps, id);
  if (rows.length > 0)
    deps.logger.warn({ deliveries: rows.length }, 'outbox: handed over deliveries left behind');
  await handOverOverdue(deps);
  return rows.length;
}

/**
 * Hands over again the pending deliveries whose next attempt is long overdue (their job was lost with Redis's
 * data); each under its round's job id, so one whose job still exists (a queue running late) is left as it is.
 */
async function handOverOverdue(deps: OutboxDeps & { logger: Logger }): Promise<void> {
  const rows = await rowsOf<{ id: string; round: number; max_attempts: number; backoff_ms: number }>(
    deps.database.db,
    sql`SELECT d.id, d.round, d.max_attempts, d.backoff_ms
        FROM deliveries d
        LEFT JOIN LATERAL (SELECT max(a.started_at) AS at FROM delivery_attempts a WHERE a.delivery_id = d.id) last
          ON true
        WHERE d.state = 'pending' AND d.enqueued_at IS NOT NULL
          AND greatest(d.enqueued_at, last.at) < now()
              - (d.backoff_ms * power(2, least(d.attempts, 20)) + ${OVERDUE_SLACK_MS}) * interval '1 millisecond'
        ORDER BY d.created_at LIMIT 200`,
  );
  for (const row of rows)
    await enqueueRound(deps.queues, row.id, row.round, {
      attempts: row.max_attempts,
      backoffMs: row.backoff_ms,
    });
  if (rows.length > 0)
    deps.logger.warn({ deliveries: rows.length }, 'outbox: handed over again deliveries long overdue');
}
