import { changesRepository, type EventRow } from '../db/repositories/changes.js';
import { webhooksRepository, webhookSubject } from '../db/repositories/webhooks.js';
import { sql } from 'drizzle-orm';
import { handOver, handOverPending, recordDelivery } from '../delivery/index.js';
import type { Logger } from '../logger.js';
import type { WebhookBody, WebhookEvent } from './events.js';
import { webhookSchedule, type WebhookDeps } from './subscriptions.js';

/**
 * Fans the change feed's committed events out to the subscriptions, as deliveries of the shared `deliveries` queue
 * (signed, retried, logged: shared/delivery). The feed is the outbox: its rows are written in the writing
 * transaction, so an event is fired for each committed change and for none rolled back, and the dispatcher's
 * position (webhook_dispatch.last_seq) is a seq of the feed, which has no holes.
 *
 * One dispatcher at a time (an advisory lock). Each (subscription, change) gets its delivery row and its
 * webhook_sent row in one transaction (the deliveries outbox, shared/delivery/outbox.ts), and is skipped if seen
 * again; the delivery is handed to the queue after the commit. A dispatcher that dies between the two leaves the
 * row un-enqueued, and the next run (or the list sweeper) hands it over: never sent twice under two delivery ids,
 * never left pending without a job.
 */

const LOCK_KEY = 0x5746_4401; // "WF" D 1: the webhook dispatcher
const BATCH = 200;

export function eventBody(change: EventRow): WebhookBody {
  return {
    id: `evt_${change.seq}`,
    event: change.event as WebhookEvent,
    created_at: change.at,
    data: { type: change.type, id: change.id, question_id: change.question_id, tags: change.tags },
  };
}

export async function dispatchWebhooks(
  deps: WebhookDeps & { logger: Logger },
): Promise<{ events: number; deliveries: number; disabled: number[] }> {
  const changes = changesRepository(deps.database);
  const webhooks = webhooksRepository(deps.database);
  return deps.database.withAdvisoryLock(LOCK_KEY, async () => {
    // Deliveries an earlier run recorded but died before handing over.
    await handOverPending(deps);
    const disabled = await webhooks.disableFailing(deps.config.webhook.disableAfterFailures);
    let events = 0;
    let deliveries = 0;
    for (;;) {
      const batch = await changes.eventsAfter(await webhooks.dispatchedThrough(), BATCH);
      for (const change of batch) {
        let sent = 0;
        for (const target of await webhooks.subscribers(change.event, change.seq, change.tags)) {
          if (await webhooks.wasSent(target.id, change.seq)) continue;
          const deliveryId = await deps.database.db.transaction(async (tx) => {
            const id = await recordDelivery(tx, {
              url: target.url,
              secret: target.secret,
              event: change.event,
              body: eventBody(change),
              subject: webhookSubject(target.id),
              schedule: webhookSchedule(deps.config),
            });
            await tx.execute(sql`INSERT INTO webhook_sent (subscription_id, change_seq, delivery_id)
                                 VALUES (${target.id}, ${change.seq}, ${id})`);
            return id;
          });
          await handOver(deps, deliveryId);
          sent++;
        }
        // Events nobody subscribes to move the position once per batch, not once each.
        if (sent > 0) await webhooks.setDispatchedThrough(change.seq);
        deliveries += sent;
        events++;
      }
      if (batch.length > 0) await webhooks.setDispatchedThrough(batch[batch.length - 1]!.seq);
      if (batch.length < BATCH) return { events, deliveries, disabled };
    }
  });
}
