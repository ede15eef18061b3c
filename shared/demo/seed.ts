import type { Database } from '../db/client.js';
import type { Progress } from '../progress.js';
import { createIndexes, dropSecondaryIndexes } from '../db/bulk/indexes.js';
import {
  analyzeQa,
  countQaRows,
  QA_TABLES,
  recount,
  syncSequences,
  truncateQa,
} from '../db/bulk/qa-tables.js';
import { runBulk } from '../db/bulk/session.js';
import { syncBadgeCounts } from '../db/bulk/badge-counts.js';
import { awardDemoBadges } from './badges.js';
import { generateDemo, type DemoCounts, type DemoOptions } from './generate.js';

export class NotEmptyError extends Error {}

/**
 * Seeds the demo dataset in one transaction with triggers off, by COPY where the driver has it, with the
 * secondary indexes built once after the rows, then recounts: either all of it lands, or nothing. Refuses a database that already holds Q&A rows unless `reset` empties it first.
 */
export async function seedDatabase(
  database: Database,
  options: DemoOptions & { reset?: boolean; progress?: Progress },
): Promise<DemoCounts & { seconds: number }> {
  const started = performance.now();
  const counts = await runBulk(
    database,
    { triggersOff: true, progress: options.progress },
    async (session) => {
      if (options.reset) await truncateQa(session);
      else {
        const existing = Object.entries(await countQaRows(session)).filter(([, n]) => n > 0);
        if (existing.length > 0) {
          throw new NotEmptyError(
            `the database already holds Q&A data (${existing.map(([t, n]) => `${n} ${t}`).join(', ')}); ` +
              'run with --reset to empty it first (this also deletes API keys, verification lists, webhook subscriptions and polls)',
          );
        }
      }
      // On a PostgreSQL server (COPY available): indexes built after the rows, and the generator writes
      // question_tags' sort keys itself, with no lookup per row (the trigger is enabled again below, or by the
      // rollback). The embedded database (small by design) keeps the plain path.
      const bulk = session.copy !== undefined;
      const indexes = bulk ? await dropSecondaryIndexes(session, QA_TABLES) : [];
      if (bulk) await session.query('ALTER TABLE question_tags DISABLE TRIGGER question_tags_sort_keys');
      const generated = await generateDemo(session, options);
      await awardDemoBadges(session);
      await syncBadgeCounts(session);
      if (bulk)
        await session.query('ALTER TABLE question_tags ENABLE ALWAYS TRIGGER question_tags_sort_keys');
      await createIndexes(session, indexes);
      await syncSequences(session);
      // After the indexes: recount's per-user counts look authors up by index.
      await recount(session);
      await analyzeQa(session);
      return generated;
    },
  );
  return { ...counts, seconds: Math.round((performance.now() - started) / 100) / 10 };
}
