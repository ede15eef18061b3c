import { sql } from 'drizzle-orm';
import { expect, vi } from 'vitest';
import type { Database } from '../../shared/db/client.js';
import { deliveryJobId } from '../../shared/queues/deliveries.js';
import type { Queues } from '../../shared/queues/producer.js';

export interface DeliveryRow extends Record<string, unknown> {
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

export async function deliveryRow(database: Database, id: string): Promise<DeliveryRow> {
  const [row] = await database.query<DeliveryRow>(
    sql`SELECT state, attempts, last_status, last_error FROM deliveries WHERE id = ${id}`,
  );
  return row!;
}

/** Waits until the delivery has ended (delivered or given up) and its job has settled in BullMQ. */
export async function settled(
  database: Database,
  queues: Queues,
  id: string,
  round = 0,
  timeout = 20_000,
): Promise<DeliveryRow> {
  await vi.waitFor(async () => expect((await deliveryRow(database, id)).state).not.toBe('pending'), {
    timeout,
    interval: 50,
  });
  await vi.waitFor(
    async () => {
      const job = await queues.queue('deliveries').getJob(deliveryJobId(id, round));
      expect(['completed', 'failed']).toContain(await job?.getState());
    },
    { timeout, interval: 50 },
  );
  return deliveryRow(database, id);
}

export async function attemptLog(database: Database, id: string) {
  return database.query<{ attempt: number; status: number | null; error: string | null; finished: boolean }>(
    sql`SELECT attempt, status, error, finished_at IS NOT NULL AS finished
        FROM delivery_attempts WHERE delivery_id = ${id} ORDER BY attempt`,
  );
}

export async function countDeliveries(database: Database, subject: string): Promise<number> {
  const [row] = await database.query<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM deliveries WHERE subject = ${subject}`,
  );
  return row!.n;
}
