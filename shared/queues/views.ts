import { defineQueue, retrying, Unread } from './define.js';

/** Question views are counted in Redis on the hot path and flushed to PostgreSQL in batches by this queue. */
export const viewsQueue = defineQueue({
  name: 'views',
  jobs: { flush: {} },
  results: { flush: Unread },
  defaultJobOptions: retrying(5, 1000),
  schedulers: () => [{ id: 'views-flush', job: 'flush', payload: {}, repeat: { every: 5000 } }],
});
