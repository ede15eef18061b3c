import { eq } from 'drizzle-orm';
import type { Db } from '../client.js';
import { users } from '../schema/index.js';

export function usersRepository(db: Db) {
  return {
    async create(user: { username: string; displayName?: string; bio?: string; avatar?: string }) {
      const [row] = await db
        .insert(users)
        .values({
          username: user.username,
          displayName: user.displayName ?? user.username,
          bio: user.bio,
          avatar: user.avatar,
        })
        .returning({ id: users.id, username: users.username });
      return row!;
    },

    async findByUsername(username: string) {
      const [row] = await db
        .select({ id: users.id, username: users.username })
        .from(users)
        .where(eq(users.username, username));
      return row;
    },
  };
}
