import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { syncBadgeCounts } from '../../shared/db/bulk/badge-counts.js';
import { runBulk } from '../../shared/db/bulk/session.js';
import { badgeAwards } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addComment, addQuestion, addTag, addUser, at, readerOf } from '../qa-read/fixtures.js';

/** Badges in the timeline, the badge lists, and the vector form of the per-user routes, over a small known site. */
// Generous per-test bound: the first requests build the routes' serialisers, slow on a loaded 2-core machine.
describe('badges: timeline events, /users/{ids}/badges, /badges', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const id: Record<string, number> = {};

  const { ok, bad } = readerOf(() => app);

  type Event = { type: string; id: number };
  /** Every event of a timeline, walked page by page with next_cursor. */
  const walk = async (users: string, limit: number) => {
    const seen: Event[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const data: { events: Event[]; next_cursor: string | null } = await ok(
        `/api/users/${users}/timeline?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(data.events.length).toBeLessThanOrEqual(limit);
      seen.push(...data.events.map((e) => ({ type: e.type, id: e.id })));
      cursor = data.next_cursor;
      expect(++pages).toBeLessThan(50);
    } while (cursor);
    return seen;
  };

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    id.ann = (await addUser(db, { username: 'ann', createdAt: at(0) })).id;
    id.ben = (await addUser(db, { username: 'ben', createdAt: at(0) })).id;
    id.ipa = (await addTag(db, 'ipa')).id;
    id.qb = (await addQuestion(db, { authorId: id.ben, createdAt: at(0), tagIds: [id.ipa] })).id;
    id.q1 = (
      await addQuestion(db, { authorId: id.ann, createdAt: at(1), slug: 'ann-question', tagIds: [id.ipa] })
    ).id;
    id.a1 = (await addAnswer(db, { questionId: id.qb, authorId: id.ann, createdAt: at(3) })).id;
    id.c1 = (await addComment(db, { questionId: id.qb, authorId: id.ann, createdAt: at(4) })).id;
    const award = async (
      user: string,
      name: string,
      cls: 'gold' | 'silver' | 'bronze',
      minute: number,
      postId?: number,
    ) => {
      const [row] = await db
        .insert(badgeAwards)
        .values({ userId: id[user]!, name, class: cls, awardedAt: at(minute), postId })
        .returning();
      return row!.id;
    };
    id.b1 = await award('ann', 'Student', 'bronze', 2, id.q1);
    // At the instant of the answer it was earned for: the tie puts the badge first.
    id.b2 = await award('ann', 'Teacher', 'bronze', 3, id.a1);
    id.b3 = await award('ann', 'Autobiographer', 'bronze', 5);
    id.b4 = await award('ann', 'Famous Question', 'gold', 6, id.q1);
    id.b5 = await award('ben', 'Student', 'bronze', 7);
    await runBulk(runtime.database, {}, (session) => syncBadgeCounts(session));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('lists badges in the timeline, newest first, at every page size, with the badge and its post', async () => {
    const expected = [
      { type: 'badge', id: id.b4 },
      { type: 'badge', id: id.b3 },
      { type: 'comment', id: id.c1 },
      { type: 'badge', id: id.b2 },
      { type: 'answer', id: id.a1 },
      { type: 'badge', id: id.b1 },
      { type: 'question', id: id.q1 },
    ];
    for (const limit of [1, 2, 3, 100]) expect(await walk(String(id.ann), limit)).toEqual(expected);
    const { events } = await ok(`/api/users/${id.ann}/timeline`);
    expect(events[0]).toEqual({
      type: 'badge',
      user_id: id.ann,
      id: id.b4,
      question_id: id.q1,
      question_title: expect.any(String),
      question_slug: 'ann-question',
      badge: { name: 'Famous Question', class: 'gold', tag_based: false },
      created_at: at(6).toISOString(),
    });
    expect(events[1]).toMatchObject({
      id: id.b3,
      question_id: null,
      question_title: null,
      question_slug: null,
    });
    expect(events[3]).toMatchObject({
      id: id.b2,
      question_id: id.qb,
      badge: { name: 'Teacher', class: 'bronze' },
    });
    expect(events[2]).not.toHaveProperty('badge');
  });

  it("pages a user's badges newest first, by page and by cursor, totals from the badge counts", async () => {
    const first = await ok(`/api/users/${id.ann}/badges?limit=3`);
    expect(first.badges.map((b: { id: number }) => b.id)).toEqual([id.b4, id.b3, id.b2]);
    expect(first.badges[0]).toEqual({
      id: id.b4,
      user_id: id.ann,
      name: 'Famous Question',
      class: 'gold',
      tag_based: false,
      post_id: id.q1,
      awarded_at: at(6).toISOString(),
    });
    expect(first.pagination).toMatchObject({ total_items: 4, total_pages: 2, current_page: 1 });
    const next = await ok(`/api/users/${id.ann}/badges?limit=3&cursor=${first.pagination.next_cursor}`);
    expect(next.badges.map((b: { id: number }) => b.id)).toEqual([id.b1]);
    expect(next.pagination.next_cursor).toBeNull();
    expect(
      (await ok(`/api/users/${id.ann}/badges?limit=3&page=2`)).badges.map((b: { id: number }) => b.id),
    ).toEqual([id.b1]);
    const profile = await ok(`/api/users/${id.ann}`);
    expect(profile.badges).toEqual({ gold: 1, silver: 0, bronze: 3 });
  });

  it('merges several users (ids separated by ";"), leaving unknown ids out', async () => {
    const both = await ok(`/api/users/${id.ann};${id.ben};999999/badges`);
    expect(both.badges.map((b: { id: number }) => b.id)).toEqual([id.b5, id.b4, id.b3, id.b2, id.b1]);
    expect(both.pagination.total_items).toBe(5);
    const merged = await walk(`${id.ben};${id.ann}`, 2);
    expect(merged[0]).toEqual({ type: 'badge', id: id.b5 });
    expect(merged.at(-1)).toEqual({ type: 'question', id: id.qb });
    expect(merged).toHaveLength(9);
    expect((await ok('/api/users/999998;999999/timeline')).events).toEqual([]);
    // A cursor belongs to its list: one user's is refused by the vector's.
    const { next_cursor } = await ok(`/api/users/${id.ann}/timeline?limit=1`);
    await bad(`/api/users/${id.ann};${id.ben}/timeline?cursor=${next_cursor}`);
  });

  it('takes several user ids on the per-user lists, merged, with their summed totals', async () => {
    const both = `${id.ann};${id.ben}`;
    const questions = await ok(`/api/users/${both}/questions`);
    expect(questions.questions.map((q: { id: number }) => q.id)).toEqual([id.q1, id.qb]);
    expect(questions.pagination.total_items).toBe(2);
    const page = await ok(`/api/users/${both}/questions?limit=1`);
    const rest = await ok(`/api/users/${both}/questions?limit=1&cursor=${page.pagination.next_cursor}`);
    expect(rest.questions.map((q: { id: number }) => q.id)).toEqual([id.qb]);
    const answers = await ok(`/api/users/${id.ben};${id.ann}/answers`);
    expect(answers.answers.map((a: { id: number }) => a.id)).toEqual([id.a1]);
    expect(answers.pagination.total_items).toBe(1);
    expect((await ok(`/api/users/${id.ben}/answers`)).answers).toEqual([]);
    const comments = await ok(`/api/users/${both}/comments`);
    expect(comments.comments.map((c: { id: number }) => c.id)).toEqual([id.c1]);
    expect(comments.pagination.total_items).toBe(1);
    expect((await ok(`/api/users/${both}/tags`)).tags).toEqual([
      { name: 'ipa', slug: 'ipa', answer_score: 0, answer_count: 1, question_score: 0, question_count: 2 },
    ]);
    expect((await ok(`/api/users/${id.ben}/tags`)).tags).toEqual([
      { name: 'ipa', slug: 'ipa', answer_score: 0, answer_count: 0, question_score: 0, question_count: 1 },
    ]);
    const none = await ok('/api/users/999998;999999/questions');
    expect(none).toMatchObject({ questions: [], pagination: { total_items: 0 } });
    for (const route of ['questions', 'answers', 'comments', 'tags']) {
      await bad(`/api/users/999999/${route}`, 404);
      await bad(`/api/users/${id.ann};x/${route}`);
      await bad(`/api/users/${Array.from({ length: 101 }, (_, i) => i + 1).join(';')}/${route}`);
    }
  });

  it("lists the site's badges with their award counts", async () => {
    const byClass = await ok('/api/badges');
    expect(byClass.badges).toEqual([
      { name: 'Famous Question', class: 'gold', tag_based: false, award_count: 1 },
      { name: 'Autobiographer', class: 'bronze', tag_based: false, award_count: 1 },
      { name: 'Student', class: 'bronze', tag_based: false, award_count: 2 },
      { name: 'Teacher', class: 'bronze', tag_based: false, award_count: 1 },
    ]);
    expect(byClass.pagination).toMatchObject({ total_items: 4, total_pages: 1 });
    expect((await ok('/api/badges?sort=awards&limit=1')).badges).toEqual([
      { name: 'Student', class: 'bronze', tag_based: false, award_count: 2 },
    ]);
    const past = await ok('/api/badges?sort=name&page=9&limit=2');
    expect(past).toMatchObject({ badges: [], pagination: { total_items: 4, current_page: 9 } });
  });

  it('answers 404 for an unknown user and 400 for bad parameters', async () => {
    await bad('/api/users/999999/badges', 404);
    await bad('/api/users/999999/timeline', 404);
    await bad('/api/users/99999999999/timeline', 404);
    for (const url of [
      '/api/users/abc/badges',
      '/api/users/0/timeline',
      `/api/users/${id.ann};x/timeline`,
      `/api/users/${id.ann};0/badges`,
      `/api/users/${Array.from({ length: 101 }, (_, i) => i + 1).join(';')}/timeline`,
      `/api/users/${id.ann}/badges?limit=0`,
      `/api/users/${id.ann}/badges?cursor=abc`,
      `/api/users/${id.ann}/timeline?limit=101`,
      '/api/badges?sort=bogus',
      '/api/badges?page=0',
    ])
      await bad(url);
  });
});
