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
import { loadBadgeAwards, type BadgeAwardCounts } from './badge-awards.js';
import { loadStaged, type LoadCounts } from './load.js';
import { dumpFiles, stageDump, type StagedCounts } from './staging.js';

export class ForeignContentError extends Error {}

export interface ImportSummary {
  staged: StagedCounts;
  loaded: LoadCounts;
  badges: BadgeAwardCounts;
  seconds: number;
}

/**
 * Imports a Stack Exchange dump folder in one transaction (all or nothing) with triggers off, then recounts.
 * Ids are the dump's, so re-running updates in place. A database holding questions or answers that are not
 * in the dump (seeded or written through the API) is refused unless `reset` empties it first, because
 * the dump's ids would overwrite them.
 */
export async function importStackExchange(
  database: Database,
  dir: string,
  options: { reset?: boolean; progress?: Progress } = {},
): Promise<ImportSummary> {
  const started = performance.now();
  return runBulk(database, { triggersOff: true, progress: options.progress }, async (session) => {
    if (options.reset) await truncateQa(session);
    const staged = await stageDump(session, dir);
    const [foreign] = await session.query<{ questions: number; answers: number }>(
      `SELECT (SELECT count(*) FROM questions q WHERE NOT EXISTS (SELECT 1 FROM se_posts p WHERE p.id = q.id AND p.type = 1))::int AS questions,
              (SELECT count(*) FROM answers a WHERE NOT EXISTS (SELECT 1 FROM se_posts p WHERE p.id = a.id AND p.type = 2))::int AS answers`,
    );
    if (foreign!.questions > 0 || foreign!.answers > 0) {
      throw new ForeignContentError(
        `the database holds ${foreign!.questions} questions and ${foreign!.answers} answers that are not in this dump; ` +
          'run with --reset to empty the Q&A tables first (this also deletes API keys, verification lists, webhook subscriptions and polls)',
      );
    }
    // Into empty tables (a first import, or --reset) on a PostgreSQL server the secondary indexes are built once
    // after the rows; a re-import into a filled database keeps them, as it updates rows that are already indexed.
    const empty =
      session.copy !== undefined && Object.values(await countQaRows(session)).every((n) => n === 0);
    const indexes = empty ? await dropSecondaryIndexes(session, QA_TABLES) : [];
    // The loader writes question_tags' sort keys itself; the per-row trigger would look them up again.
    if (empty) await session.query('ALTER TABLE question_tags DISABLE TRIGGER question_tags_sort_keys');
    const loaded = await loadStaged(session, () => syncSequences(session));
    if (empty) await session.query('ALTER TABLE question_tags ENABLE ALWAYS TRIGGER question_tags_sort_keys');
    const badges = await loadBadgeAwards(session, dumpFiles(dir)['Badges.xml']);
    await createIndexes(session, indexes);
    await syncSequences(session);
    await recount(session);
    await analyzeQa(session);
    return { staged, loaded, badges, seconds: Math.round((performance.now() - started) / 100) / 10 };
  });
}
