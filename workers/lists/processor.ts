import { createListBudget } from '../../shared/lists/budget.js';
import { processChunk } from '../../shared/lists/chunk.js';
import { endList, handOverEnd } from '../../shared/lists/end.js';
import { processRetry } from '../../shared/lists/retry.js';
import { sweepLists } from '../../shared/lists/sweep.js';
import { installSchedulers } from '../../shared/queues/schedulers.js';
import { createVerifier } from '../../shared/verification/index.js';
import { verifierOptionsFrom } from '../../shared/verification/service.js';
import type { ProcessorFactory } from '../types.js';

/**
 * Chunks one worker process verifies at once. A chunk mostly waits for the replies of the host jobs that probe its
 * addresses, so slots are cheap; a list never has more than LIST_LANES chunks in flight, so this many serve two big
 * lists side by side, and next chunks go to the back of the queue so further lists take turns. The host jobs, not
 * this number, hold the per-MX cap.
 */
const LIST_WORKER_CONCURRENCY = 32;

/**
 * The verify-lists queue: chunk jobs of asynchronous lists and the sweeper. One verifier per process, as the verify
 * queue has (its own: a list's long probes never hold the bulk verifier's sessions).
 */
export const verifyListsProcessor: ProcessorFactory<'verify-lists'> = (deps) => {
  const log = deps.logger.child({ component: 'verify-lists' });
  const verifier = createVerifier(verifierOptionsFrom(deps.config, deps.redis, log));
  const budget = createListBudget(deps.redis, deps.config);
  const endDeps = { database: deps.database, queues: deps.queues, budget, logger: log };
  const { retryDelayMs, retryWindowMs } = deps.config.verifyLists;
  const work = {
    database: deps.database,
    queues: deps.queues,
    verifier,
    retry: { delayMs: retryDelayMs, windowMs: retryWindowMs },
  };
  // Out of retries (Redis or PostgreSQL down for minutes): the list ends as failed rather than hanging.
  const failListAfterLastAttempt = async (
    job: { opts: { attempts?: number }; attemptsMade: number },
    jobLog: typeof log,
    listId: string,
    err: unknown,
  ) => {
    const attempts = job.opts.attempts ?? 1;
    if (job.attemptsMade + 1 < attempts) return;
    jobLog.error({ err, listId }, 'list job out of retries; the list failed');
    await endList(endDeps, listId, 'failed').catch(() => {});
  };
  // The sweeper is what re-creates a list's lost jobs, and its job scheduler lives in Redis too: a Redis restarted
  // without persistence loses it with everything else. It is installed again whenever the connection comes back.
  let closing = false;
  const onReady = (): void =>
    void installSchedulers(deps, 'verify-lists', () => closing).catch((err: unknown) =>
      log.warn({ err }, 'could not reinstall the list sweeper'),
    );
  deps.redis.on('ready', onReady);
  return {
    close: async () => {
      closing = true;
      deps.redis.off('ready', onReady);
      await verifier.close();
    },
    concurrency: LIST_WORKER_CONCURRENCY,
    handlers: {
      chunk: async ({ listId, chunk }, { job, log: jobLog }) => {
        try {
          const outcome = await processChunk(work, listId, chunk);
          if (outcome.state === 'done' && outcome.completed) {
            jobLog.info({ listId }, 'list completed');
            await handOverEnd(endDeps, listId, outcome.delivery);
          }
          return outcome;
        } catch (err) {
          await failListAfterLastAttempt(job, jobLog, listId, err);
          throw err;
        }
      },
      retry: async ({ listId, due }, { job, log: jobLog }) => {
        try {
          const outcome = await processRetry(work, listId, due);
          if (outcome.state === 'done' && outcome.completed) {
            jobLog.info({ listId }, 'list completed');
            await handOverEnd(endDeps, listId, outcome.delivery);
          }
          return outcome;
        } catch (err) {
          await failListAfterLastAttempt(job, jobLog, listId, err);
          throw err;
        }
      },
      sweep: async () => sweepLists({ database: deps.database, queues: deps.queues, logger: log }),
    },
  };
};
