import { defineQueue, retrying, Unread } from './define.js';

/**
 * The change feed's upkeep (shared/changes, shared/webhooks): `dispatch` fans committed events out to webhook
 * subscriptions every WEBHOOK_DISPATCH_EVERY_MS; `prune` deletes changes older than QA_CHANGES_RETENTION_DAYS, hourly.
 */
export const qaFeedQueue = defineQueue({
  name: 'qa-feed',
  jobs: { dispatch: {}, prune: {} },
  results: { dispatch: Unread, prune: Unread },
  defaultJobOptions: { ...retrying(5, 1000), removeOnComplete: { age: 60, count: 100 } },
  schedulers: (config) => [
    {
      id: 'webhooks-dispatch',
      job: 'dispatch',
      payload: {},
      repeat: { every: config.webhook.dispatchEveryMs },
    },
    { id: 'qa-changes-prune', job: 'prune', payload: {}, repeat: { every: 3_600_000 } },
  ],
});
