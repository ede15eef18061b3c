import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { Db } from '../../shared/db/client.js';
import {
  answers,
  categories,
  comments,
  questions,
  questionTags,
  tags,
  users,
} from '../../shared/db/schema/index.js';

/** Rows written straight through drizzle, as the tests of the read API need them; triggers keep the counters. */

let sequence = 0;
const next = () => ++sequence;

/** A fixed base time so that created_at orders are exact; `minutes` shifts it. */
export const at = (minutes: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, 0) + minutes * 60_000);

export async function addUser(
  db: Db,
  fields: Partial<typeof users.$inferInsert> & { username?: string } = {},
): Promise<typeof users.$inferSelect> {
  const username = fields.username ?? `user${next()}`;
  const [row] = await db
    .insert(users)
    .values({ displayName: fields.displayName ?? username, ...fields, username })
    .returning();
  return row!;
}

export async function addCategory(db: Db, name: string) {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const [row] = await db
    .insert(categories)
    .values({ name, slug, description: `${name} questions`, icon: 'fa-x' })
    .returning();
  return row!;
}

export async function addTag(db: Db, name: string, createdAt?: Date) {
  const [row] = await db
    .insert(tags)
    .values({
      name,
      slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      description: `About ${name}`,
      ...(createdAt ? { createdAt } : {}),
    })
    .returning();
  return row!;
}

export async function addQuestion(
  db: Db,
  fields: Partial<typeof questions.$inferInsert> & { authorId: number; tagIds?: number[] },
): Promise<typeof questions.$inferSelect> {
  const n = next();
  const { tagIds = [], ...rest } = fields;
  const title = rest.title ?? `Question number ${n}`;
  const [row] = await db
    .insert(questions)
    .values({ content: `Body of question ${n}`, slug: `question-${n}`, ...rest, title })
    .returning();
  for (const tagId of tagIds) await db.insert(questionTags).values({ questionId: row!.id, tagId });
  return row!;
}

export async function addAnswer(
  db: Db,
  fields: Partial<typeof answers.$inferInsert> & { questionId: number; authorId: number },
) {
  const [row] = await db
    .insert(answers)
    .values({ content: `Answer ${next()}`, ...fields })
    .returning();
  return row!;
}

export async function addComment(
  db: Db,
  fields: Partial<typeof comments.$inferInsert> & { authorId: number } & (
      { questionId: number } | { answerId: number }
    ),
) {
  const [row] = await db
    .insert(comments)
    .values({ content: `Comment ${next()}`, ...fields })
    .returning();
  return row!;
}

/**
 * Requests to a Q&A app for the read tests: `ok` expects a 200 envelope and returns its data; `bad` expects the
 * error body with `status` and returns its message. `app` is read at each
 * call (the tests build it in beforeAll).
 */
export function readerOf(app: () => FastifyInstance) {
  const get = async (url: string) => {
    const res = await app().inject(url);
    return { status: res.statusCode, body: res.json() };
  };
  const ok = async (url: string) => {
    const res = await get(url);
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(res.body.success).toBe(true);
    return res.body.data;
  };
  const bad = async (url: string, status = 400) => {
    const res = await get(url);
    expect(res.status, url).toBe(status);
    expect(res.body).toEqual({ error: true, message: expect.any(String), code: status });
    return res.body.message as string;
  };
  return { ok, bad };
}
