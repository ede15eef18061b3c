import { changesRepository } from '../../shared/db/repositories/changes.js';
import { dispatchWebhooks } from '../../shared/webhooks/dispatch.js';
import type { ProcessorFactory } from '../types.js';

/**
 * The change feed's upkeep (shared/queues/qa-feed.ts). One job at a time per worker; across workers the dispatcher
 * serialises itself (an advisory lock), and pruning is one statement.
 */
export const qaFeedProcessor: ProcessorFactory<'qa-feed'> = (deps) => {
  const changes = changesRepository(deps.database);
  return {
    concurrency: 1,
    handlers: {
      dispatch: async (_payload, { log }) => {
        const result = await dispatchWebhooks(deps);
        if (result.disabled.length > 0)
          log.warn({ subscriptions: result.disabled }, 'webhook subscriptions disabled after failures');
        if (result.deliveries > 0) log.debug(result, 'webhook events dispatched');
        return result;
      },
      prune: async (_payload, { log }) => {
        const deleted = await changes.prune(deps.config.qa.changesRetentionDays);
        if (deleted > 0) log.info({ deleted }, 'old changes pruned');
        return { deleted };
      },
    },
  };
};
