/**
 * Real content for the endpoint tests: the beer.stackexchange.com dump written into the test database (questions,
 * tags, answers with the accepted one marked), plus a few hand-written posts on a topic the dump never mentions, so a
 * test knows exactly which posts chat must cite.
 */
import { eq } from 'drizzle-orm';
import type { Database } from '../../../shared/db/client.js';
import { answers, questions, questionTags, tags, users } from '../../../shared/db/schema/index.js';
import { readStackExchangeQuestions, slugifyTag } from '../../../shared/ai/index.js';
import { BEER_POSTS, readBeerPosts } from '../../ai/support/beer-dump.js';

export interface LoadedSite {
  authorId: number;
  questionIds: Map<number, number>;
  tagSlugs: Set<string>;
}

export async function createAuthor(db: Database['db'], username = 'brewer'): Promise<number> {
  const [user] = await db
    .insert(users)
    .values({ username, displayName: username })
    .returning({ id: users.id });
  return user!.id;
}

/** Inserts tags (by name) that do not exist yet and returns name → id for all of them. */
export async function ensureTags(db: Database['db'], names: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(names)];
  if (unique.length > 0) {
    await db
      .insert(tags)
      .values(unique.map((name) => ({ name, slug: slugifyTag(name) })))
      .onConflictDoNothing();
  }
  const rows = await db.select({ id: tags.id, name: tags.name }).from(tags);
  return new Map(rows.map((r) => [r.name, r.id]));
}

export async function insertQuestion(
  db: Database['db'],
  authorId: number,
  q: { title: string; content: string; tags: string[]; votes?: number },
): Promise<number> {
  const [row] = await db
    .insert(questions)
    .values({
      title: q.title,
      slug: `${slugifyTag(q.title).slice(0, 60)}-${Math.random().toString(36).slice(2, 8)}`,
      content: q.content,
      authorId,
      votes: q.votes ?? 0,
    })
    .returning({ id: questions.id });
  const tagIds = await ensureTags(db, q.tags);
  if (q.tags.length > 0)
    await db.insert(questionTags).values(q.tags.map((t) => ({ questionId: row!.id, tagId: tagIds.get(t)! })));
  return row!.id;
}

export async function insertAnswer(
  db: Database['db'],
  authorId: number,
  a: { questionId: number; content: string; votes?: number; isAccepted?: boolean },
): Promise<number> {
  const [row] = await db
    .insert(answers)
    .values({
      questionId: a.questionId,
      authorId,
      content: a.content,
      votes: a.votes ?? 0,
      isAccepted: a.isAccepted ?? false,
    })
    .returning({ id: answers.id });
  return row!.id;
}

/** Every question of the beer dump with its tags, and every answer (HTML bodies, as an importer stores them). */
export async function loadBeerDump(db: Database['db']): Promise<LoadedSite> {
  const authorId = await createAuthor(db, 'beer-dump');
  const questionIds = new Map<number, number>();
  const tagSlugs = new Set<string>();
  const accepted = new Map<number, number>();
  for (const post of await readBeerPosts())
    if (post.type === 'question' && post.acceptedAnswerId) accepted.set(post.id, post.acceptedAnswerId);

  for await (const q of readStackExchangeQuestions(BEER_POSTS)) {
    questionIds.set(
      q.id,
      await insertQuestion(db, authorId, { title: q.title, content: q.body, tags: q.tags, votes: q.score }),
    );
    for (const t of q.tags) tagSlugs.add(slugifyTag(t));
  }
  for (const post of await readBeerPosts()) {
    if (post.type !== 'answer' || !post.parentId || !questionIds.has(post.parentId)) continue;
    await insertAnswer(db, authorId, {
      questionId: questionIds.get(post.parentId)!,
      content: post.text,
      votes: post.score,
      isAccepted: accepted.get(post.parentId) === post.id,
    });
  }
  return { authorId, questionIds, tagSlugs };
}

export async function deleteTag(db: Database['db'], slug: string): Promise<void> {
  await db.delete(tags).where(eq(tags.slug, slug));
}
