import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import type { Plan, Scope } from '../../shared/access/keys.js';
import { usersRepository } from '../../shared/db/repositories/users.js';
import { categories, tags } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

export type App = Awaited<ReturnType<typeof buildQaApp>>;

export interface Writer {
  id: number;
  username: string;
  key: string;
  keyId: number;
  auth: { authorization: string };
}

/** A runtime and Q&A app for write tests: rate limits off (their own tests are in test/ratelimit). */
export async function writeWorld(overrides: Record<string, string> = {}) {
  const runtime: TestRuntime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', ...overrides });
  const app = await buildQaApp(runtime);
  const db = runtime.database.db;
  await db.insert(tags).values([
    { name: 'brewing', slug: 'brewing' },
    { name: 'yeast', slug: 'yeast' },
    { name: 'hops', slug: 'hops' },
    { name: 'ipa', slug: 'ipa' },
    { name: 'lager', slug: 'lager' },
    { name: 'stout', slug: 'stout' },
  ]);
  const [category] = await db
    .insert(categories)
    .values({ name: 'Brewing', slug: 'brewing' })
    .returning({ id: categories.id });

  const writer = async (
    username: string,
    scopes: Scope[] = ['qa:write'],
    plan: Plan = 'authenticated',
  ): Promise<Writer> => {
    const user =
      (await usersRepository(db).findByUsername(username)) ??
      (await usersRepository(db).create({ username }));
    const { key, id } = await createApiKey(db, { username, plan, scopes });
    return { id: user.id, username, key, keyId: id, auth: { authorization: `Bearer ${key}` } };
  };

  const reputation = async (userId: number) => {
    const [row] = await runtime.database.query<{ reputation: number }>(
      sql`SELECT reputation FROM users WHERE id = ${userId}`,
    );
    return row!.reputation;
  };

  return {
    runtime,
    app,
    categoryId: category!.id,
    writer,
    reputation,
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}

let counter = 0;
/** A valid question body with a unique title. */
export const questionBody = (extra: Record<string, unknown> = {}) => ({
  title: `How do I keep my fermentation temperature stable ${++counter}?`,
  content: 'My ale ferments at 24°C in summer and the yeast throws off fruity esters I do not want.',
  tags: ['brewing', 'yeast'],
  ...extra,
});

export const ANSWER =
  'Use a swamp cooler: a tub of water with a wet t-shirt over the fermenter, plus frozen bottles.';
export const COMMENT = 'Which yeast strain are you using?';

/** The response is the error body with this status; returns its message. */
export const expectError = (res: LightMyRequestResponse, code: number): string => {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: code });
  expect(res.json()).toEqual({ error: true, message: expect.any(String), code });
  return res.json().message;
};
