import { viewFlusher } from '../../shared/qa/views.js';
import type { ProcessorFactory } from '../types.js';
import { KEY_GROUPS, keyGroup } from '../../shared/keyspace.js';

/**
 * Flushes the question views buffered in Redis to PostgreSQL (see shared/qa/views.ts). One flush at a time per
 * worker: flushes are cheap, and a second one would only find the batches the first is applying.
 */
export const viewsProcessor: ProcessorFactory<'views'> = (deps) => {
  const flusher = viewFlusher({
    db: deps.database.db,
    redis: deps.redis,
    prefix: keyGroup(deps.config, KEY_GROUPS.views),
  });
  return {
    concurrency: 1,
    handlers: {
      flush: async (_payload, { log }) => {
        const result = await flusher.flush();
        if (result.batches > 0) log.info(result, 'views flushed');
        return result;
      },
    },
  };
};
