import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { rows } from './pagination.js';
import type { PostKind, VoteValue } from '../../qa/reputation.js';

/**
 * One vote per user per post (unique indexes on votes); the post's `votes` counter follows by trigger (0002).
 * Callers hold the post's row lock (postWritesRepository.lockQuestion / lockAnswer), which serialises the votes
 * of one post, so reading the current vote and then writing the new one cannot interleave with another writer.
 */
export function votesRepository(db: Db) {
  const column = (kind: PostKind) => (kind === 'question' ? sql.raw('question_id') : sql.raw('answer_id'));

  return {
    async current(kind: PostKind, postId: number, userId: number): Promise<VoteValue> {
      const [row] = await rows<{ value: number }>(
        db,
        sql`SELECT value FROM votes WHERE user_id = ${userId} AND ${column(kind)} = ${postId}`,
      );
      return (row?.value ?? 0) as VoteValue;
    },

    /** Makes the user's vote on the post `value`; 0 removes it. */
    async set(kind: PostKind, postId: number, userId: number, value: VoteValue): Promise<void> {
      if (value === 0) {
        await db.execute(sql`DELETE FROM votes WHERE user_id = ${userId} AND ${column(kind)} = ${postId}`);
        return;
      }
      await db.execute(
        sql`INSERT INTO votes (user_id, ${column(kind)}, value) VALUES (${userId}, ${postId}, ${value})
            ON CONFLICT (user_id, ${column(kind)}) WHERE ${column(kind)} IS NOT NULL
            DO UPDATE SET value = EXCLUDED.value, created_at = now()`,
      );
    },

    /** The post's score as the trigger left it. */
    async score(kind: PostKind, postId: number): Promise<number> {
      const table = kind === 'question' ? sql.raw('questions') : sql.raw('answers');
      const [row] = await rows<{ votes: number }>(db, sql`SELECT votes FROM ${table} WHERE id = ${postId}`);
      return row?.votes ?? 0;
    },
  };
}
