import { changesRepository, type EventRow } from '../db/repositories/changes.js';
import { webhooksRepository, webhookSubject } from '../db/repositories/webhooks.js';
import { enqueueDelivery } from '../delivery/index.js';
import type { WebhookBody, WebhookEvent } from './events.js';
import { webhookSchedule, type WebhookDeps } from './subscriptions.js';

/**
 * Fans the change feed's committed events out to the subscriptions, as deliveries of the shared `deliveries` queue
 * (signed, retried, logged: shared/delivery). The feed is the outbox: its rows are written in the writing
 * transaction, so an event is fired for each committed change and for none rolled back, and the dispatcher's
 * position (webhook_dispatch.last_seq) is a seq of the feed, which has no holes.
 *
 * One dispatcher at a time (an advisory lock). Each (subscription, change) is recorded in webhook_sent once its
 * delivery is enqueued, and skipped if seen again: a dispatcher that dies between the two sends that one delivery
 * twice when the next one runs (receivers dedupe on the body's `id`), and never loses it.
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
  deps: WebhookDeps,
): Promise<{ events: number; deliveries: number; disabled: number[] }> {
  const changes = changesRepository(deps.database);
  const webhooks = webhooksRepository(deps.database);
  return deps.database.withAdvisoryLock(LOCK_KEY, async () => {
    const disabled = await webhooks.disableFailing(deps.config.webhook.disableAfterFailures);
    let events = 0;
    let deliveries = 0;
    for (;;) {
      const batch = await changes.eventsAfter(await webhooks.dispatchedThrough(), BATCH);
      for (const change of batch) {
        let sent = 0;
        for (const target of await webhooks.subscribers(change.event, change.seq, change.tags)) {
          if (await webhooks.wasSent(target.id, change.seq)) continue;
          const deliveryId = await enqueueDelivery(deps, {
            url: target.url,
            secret: target.secret,
            event: change.event,
            body: eventBody(change),
            subject: webhookSubject(target.id),
            schedule: webhookSchedule(deps.config),
          });
          await webhooks.markSent(target.id, change.seq, deliveryId);
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
