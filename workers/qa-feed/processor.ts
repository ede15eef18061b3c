import { changesRepository } from '../../shared/db/repositories/changes.js';
import type { ProcessorFactory } from '../types.js';

/** The change feed's upkeep (shared/queues/qa-feed.ts). One job at a time: each is one short statement. */
export const qaFeedProcessor: ProcessorFactory<'qa-feed'> = (deps) => {
  const changes = changesRepository(deps.database);
  return {
    concurrency: 1,
    handlers: {
      prune: async (_payload, { log }) => {
        const deleted = await changes.prune(deps.config.qa.changesRetentionDays);
        if (deleted > 0) log.info({ deleted }, 'old changes pruned');
        return { deleted };
      },
    },
  };
};
