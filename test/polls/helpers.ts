import { eq, sql } from 'drizzle-orm';
import { createApiKey } from '../../shared/access/admin.js';
import type { Scope } from '../../shared/access/keys.js';
import { usersRepository } from '../../shared/db/repositories/users.js';
import { polls, questions } from '../../shared/db/schema/index.js';
import { createPoll } from '../../shared/polls/creation.js';
import type { TestRuntime } from '../support/runtime.js';

export async function userWithKey(runtime: TestRuntime, username: string, scopes: Scope[] = ['qa:write']) {
  const user = await usersRepository(runtime.database.db).create({ username });
  const { key } = await createApiKey(runtime.database.db, { username, plan: 'premium', scopes });
  return { id: user.id, key, auth: { authorization: `Bearer ${key}` } };
}

export async function question(runtime: TestRuntime, authorId: number, title = 'Which yeast?') {
  const [row] = await runtime.database.db
    .insert(questions)
    .values({ title, slug: `q-${Math.random().toString(36).slice(2)}`, content: 'Body', authorId })
    .returning({ id: questions.id });
  return row!.id;
}

export async function poll(
  runtime: TestRuntime,
  options: { allowChange?: boolean; texts?: string[]; title?: string } = {},
) {
  const created = await createPoll(
    runtime.database.db,
    {
      title: options.title ?? 'Best hop?',
      options: options.texts ?? ['Cascade', 'Citra', 'Saaz'],
      allowChange: options.allowChange,
    },
    null,
  );
  return { id: created.id, options: created.options.map((o) => o.id) };
}

export async function closeNow(runtime: TestRuntime, pollId: number) {
  await runtime.database.db
    .update(polls)
    .set({ closedAt: new Date(Date.now() - 1000) })
    .where(eq(polls.id, pollId));
}

/** Counts per option straight from the votes table: what every tally must end up equal to. */
export async function countsFromVotes(runtime: TestRuntime, pollId: number): Promise<Record<number, number>> {
  const rows = await runtime.database.query<{ option_id: number; n: number }>(
    sql`SELECT option_id, count(*)::int AS n FROM poll_votes WHERE poll_id = ${pollId} GROUP BY option_id`,
  );
  return Object.fromEntries(rows.map((r) => [Number(r.option_id), Number(r.n)]));
}

/** The stored tally (what the polls worker wrote). */
export async function storedTally(runtime: TestRuntime, pollId: number): Promise<Record<number, number>> {
  const rows = await runtime.database.query<{ id: number; votes: number }>(
    sql`SELECT id, votes FROM poll_options WHERE poll_id = ${pollId} ORDER BY id`,
  );
  return Object.fromEntries(
    rows.filter((r) => Number(r.votes) > 0).map((r) => [Number(r.id), Number(r.votes)]),
  );
}

/** Polls until check() holds, or fails with the last state: tallies settle asynchronously. */
export async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!check(value)) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}
