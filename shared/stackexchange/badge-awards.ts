import { BatchInserter, type Column } from '../db/bulk/insert.js';
import { syncBadgeCounts } from '../db/bulk/badge-counts.js';
import type { BulkSession } from '../db/bulk/session.js';
import { badgeClass } from './badges.js';
import { dumpDate, dumpInt, readDumpRows } from './xml-rows.js';

export interface BadgeAwardCounts {
  /** Awards written (inserted or updated in place). */
  awards: number;
  /** Rows without an id, a name or a date, or whose user is not in Users.xml. */
  skipped: number;
}

const CLASS_NAMES = { 1: 'gold', 2: 'silver', 3: 'bronze' } as const;
const MAX_NAME = 200;

const STAGED: Column[] = [
  { name: 'id', type: 'int' },
  { name: 'user_id', type: 'int' },
  { name: 'name', type: 'text' },
  { name: 'class', type: 'text' },
  { name: 'tag_based', type: 'bool' },
  { name: 'post_id', type: 'int' },
  { name: 'awarded_at', type: 'timestamptz' },
];

/**
 * Loads each row of Badges.xml as a badge award, keyed by the dump's id (a re-import updates in place), then sets
 * the users' badge counts from the awards. Runs inside the import's transaction, after the users are loaded: an
 * award counts only for a user of Users.xml (staged as se_users), never for a placeholder or voter account
 * that took an id the dump's deleted user had. `TagBased` and `PostId` are read when the dump has them.
 */
export async function loadBadgeAwards(session: BulkSession, file: string | null): Promise<BadgeAwardCounts> {
  let skipped = 0;
  let staged = 0;
  if (file) {
    const defs = STAGED.map(
      (c) => `"${c.name}" ${c.type === 'int' ? 'integer' : c.type === 'bool' ? 'boolean' : c.type}`,
    );
    await session.query(`CREATE TEMP TABLE se_badge_awards (${defs.join(', ')}) ON COMMIT DROP`);
    const rows = new BatchInserter(session, 'se_badge_awards', STAGED, { batchSize: 20_000 });
    for await (const a of readDumpRows(file)) {
      const id = dumpInt(a.Id);
      const user = dumpInt(a.UserId);
      const name = a.Name?.trim().slice(0, MAX_NAME);
      const awarded = dumpDate(a.Date);
      if (id === null || user === null || !name || awarded === null) {
        skipped++;
        continue;
      }
      const tagBased = a.TagBased?.toLowerCase() === 'true';
      await rows.add([id, user, name, CLASS_NAMES[badgeClass(a)], tagBased, dumpInt(a.PostId), awarded]);
    }
    await rows.flush();
    staged = rows.written;
  }
  const [written] = file
    ? await session.query<{ n: number }>(
        `WITH upserted AS (
           INSERT INTO badge_awards (id, user_id, name, class, tag_based, post_id, awarded_at)
           SELECT DISTINCT ON (s.id) s.id, s.user_id, s.name, s.class, s.tag_based, s.post_id, s.awarded_at
           FROM se_badge_awards s WHERE EXISTS (SELECT 1 FROM se_users u WHERE u.id = s.user_id)
           ORDER BY s.id
           ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, name = EXCLUDED.name, class = EXCLUDED.class,
             tag_based = EXCLUDED.tag_based, post_id = EXCLUDED.post_id, awarded_at = EXCLUDED.awarded_at
           RETURNING 1)
         SELECT count(*)::int AS n FROM upserted`,
      )
    : [{ n: 0 }];
  await syncBadgeCounts(session);
  const awards = Number(written?.n ?? 0);
  return { awards, skipped: skipped + staged - awards };
}
