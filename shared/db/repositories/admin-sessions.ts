import { and, eq, gt, lte, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { adminSessions } from '../schema/index.js';

/** The admin panel's session table: one row per signed-in browser, deleted to end that session. */
export function adminSessionsRepository(db: Db) {
  return {
    async create(row: { id: string; tokenFingerprint: string; expiresAt: Date }): Promise<void> {
      await db.insert(adminSessions).values(row);
    },

    /** True while the session exists, has not expired and was made under the current admin credential. */
    async isLive(id: string, tokenFingerprint: string): Promise<boolean> {
      const rows = await db
        .select({ id: adminSessions.id })
        .from(adminSessions)
        .where(
          and(
            eq(adminSessions.id, id),
            eq(adminSessions.tokenFingerprint, tokenFingerprint),
            gt(adminSessions.expiresAt, sql`now()`),
          ),
        );
      return rows.length > 0;
    },

    async delete(id: string): Promise<void> {
      await db.delete(adminSessions).where(eq(adminSessions.id, id));
    },

    /** Ends every session; returns how many there were. */
    async deleteAll(): Promise<number> {
      const rows = await db.delete(adminSessions).returning({ id: adminSessions.id });
      return rows.length;
    },

    /** Drops expired sessions and those made under another admin credential (a rotated ADMIN_TOKEN). */
    async prune(tokenFingerprint: string): Promise<void> {
      await db
        .delete(adminSessions)
        .where(
          or(lte(adminSessions.expiresAt, sql`now()`), ne(adminSessions.tokenFingerprint, tokenFingerprint)),
        );
    },
  };
}
