import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/client.js';
import { questionsRepository } from '../../shared/db/repositories/questions.js';
import { tagsRepository } from '../../shared/db/repositories/tags.js';
import { userProfilesRepository } from '../../shared/db/repositories/user-profiles.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addTag, addUser, at } from './fixtures.js';

/**
 * The lists' statements run prepared (shared/db/prepared.ts): PostgreSQL keeps each distinct text per connection,
 * so a text must depend on the list's shape only, never on a request's values, or every page number, tag or cursor
 * would leave one more statement behind on every connection.
 */
describe('prepared list statements', () => {
  let runtime: TestRuntime;
  let database: Database;
  let tagIds: string[] = [];

  beforeAll(async () => {
    runtime = await createTestRuntime();
    const db = runtime.database.db;
    const author = await addUser(db, { username: 'writer' });
    await addUser(db, { username: 'reader' });
    const tags = [await addTag(db, 'hops'), await addTag(db, 'malt')];
    tagIds = tags.map((t) => t.slug);
    for (let i = 0; i < 30; i++) {
      await addQuestion(db, {
        authorId: author.id,
        title: `Question number ${i}`,
        slug: `question-${i}`,
        tagIds: [tags[i % 2]!.id],
        createdAt: at(i),
      });
    }
    // One connection, so that pg_prepared_statements shows every statement the lists prepared.
    database = await openDatabase({ databaseUrl: runtime.env.DATABASE_URL!, dataDir: '', maxConnections: 1 });
  });

  afterAll(async () => {
    await database?.close();
    await runtime?.close();
  });

  /**
   * The lists' reads in every shape this test uses, with the values of one round: pages near the start are walked
   * forwards and the last page backwards (two texts per shape), so every shape's two texts appear in each round.
   */
  async function readEveryShape(round: number): Promise<void> {
    const questions = questionsRepository(database.db);
    const limit = 3 + round;
    for (const sort of ['newest', 'votes', 'unanswered'] as const) {
      for (const tag of [undefined, tagIds[round % 2]!]) {
        const first = await questions.list({ sort, page: 1, limit, tag });
        expect(first.pagination.next_cursor).not.toBeNull();
        await questions.list({ sort, page: 2, limit, tag });
        await questions.list({ sort, page: first.pagination.total_pages, limit, tag });
        await questions.list({ sort, page: 1, limit, tag, cursor: first.pagination.next_cursor! });
      }
    }
    const users = userProfilesRepository(database.db);
    const tags = tagsRepository(database.db);
    for (const page of [1, 2]) {
      await users.list({ sort: 'reputation', page, limit: 1 });
      await tags.list({ sort: 'popular', page, limit: 1 });
    }
  }

  const prepared = async () =>
    (
      (await database.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM pg_prepared_statements`)) as {
        n: number;
      }[]
    )[0]!.n;

  it('prepares one statement per shape and direction, whatever the page, limit, cursor or tag', async () => {
    await readEveryShape(0);
    const afterFirst = await prepared();
    expect(afterFirst).toBeGreaterThan(0);
    await readEveryShape(1);
    await readEveryShape(2);
    expect(await prepared()).toBe(afterFirst);
  });
});
