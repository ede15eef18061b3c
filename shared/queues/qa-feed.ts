import { defineQueue, retrying, Unread } from './define.js';

/**
 * The change feed's upkeep (shared/changes): `prune` deletes changes older than QA_CHANGES_RETENTION_DAYS, hourly.
 */
export const qaFeedQueue = defineQueue({
  name: 'qa-feed',
  jobs: { prune: {} },
  results: { prune: Unread },
  defaultJobOptions: retrying(5, 1000),
  schedulers: () => [{ id: 'qa-changes-prune', job: 'prune', payload: {}, repeat: { every: 3_600_000 } }],
});
