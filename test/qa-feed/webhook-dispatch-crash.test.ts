import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSubject } from '../../shared/db/repositories/webhooks.js';
import { deliveryJobId } from '../../shared/queues/deliveries.js';
import { dispatchWebhooks } from '../../shared/webhooks/dispatch.js';
import { questionBody, writeWorld, type Writer } from '../qa-write/helpers.js';

// The webhook dispatcher dying between recording a delivery and handing it to the queue (here: the queue refuses the
// hand-over, as a process killed at that point would never make it). The next run hands the same delivery over:
// one delivery row, one webhook_sent row, one job, never a second delivery under another id.
describe('the webhook dispatcher stopped before a hand-over', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let owner: Writer;
  let writer: Writer;

  beforeAll(async () => {
    world = await writeWorld({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await world.writer('hook-owner', ['webhooks']);
    writer = await world.writer('poster', ['qa:write']);
  });
  afterAll(() => world?.close());

  it('leaves the delivery recorded, and the next run hands that one over', async () => {
    const subscribed = await world.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: owner.auth,
      payload: { url: 'http://127.0.0.1:9/hook', events: ['question.created'] },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    const subscription = subscribed.json().data.id as number;
    const asked = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: writer.auth,
      payload: questionBody(),
    });
    expect(asked.statusCode, asked.body).toBe(201);

    const { runtime } = world;
    const dying = {
      ...runtime,
      queues: {
        ...runtime.queues,
        enqueue: () => Promise.reject(new Error('killed before the hand-over')),
      } as typeof runtime.queues,
    };
    await expect(dispatchWebhooks(dying)).rejects.toThrow(/killed before the hand-over/);

    const deliveries = () =>
      runtime.database.query<{ id: string; enqueued: boolean }>(
        sql`SELECT id, enqueued_at IS NOT NULL AS enqueued FROM deliveries
            WHERE subject = ${webhookSubject(subscription)}`,
      );
    const [recorded] = await deliveries();
    expect(recorded).toMatchObject({ enqueued: false });
    // Past the outbox's grace, as a later run would be.
    await runtime.database.query(
      sql`UPDATE deliveries SET created_at = created_at - interval '1 minute' WHERE id = ${recorded!.id}`,
    );

    await dispatchWebhooks(runtime);
    expect(await deliveries()).toEqual([{ id: recorded!.id, enqueued: true }]);
    const [sent] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM webhook_sent WHERE subscription_id = ${subscription}`,
    );
    expect(sent!.n).toBe(1);
    expect(await runtime.queues.queue('deliveries').getJob(deliveryJobId(recorded!.id, 0))).toBeDefined();
  });
});
