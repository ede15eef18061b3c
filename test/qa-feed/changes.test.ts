import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeChangesCursor } from '../../shared/changes/feed.js';
import { changesRepository } from '../../shared/db/repositories/changes.js';
import { ANSWER, COMMENT, expectError, questionBody, writeWorld, type Writer } from '../qa-write/helpers.js';

type Change = { seq: number; type: string; id: number; op: string; at: string };

describe('GET /changes', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let asker: Writer;
  let helper: Writer;

  beforeAll(async () => {
    world = await writeWorld();
    asker = await world.writer('asker');
    helper = await world.writer('helper');
  });
  afterAll(() => world.close());

  const feed = async (query = '') => {
    const res = await world.app.inject(`/api/changes${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { changes: Change[]; next_cursor: string };
  };
  const post = (who: Writer, url: string, payload: object, method: 'POST' | 'PATCH' | 'PUT' = 'POST') =>
    world.app.inject({ method, url, headers: who.auth, payload });

  it('reports each committed write in commit order, deletions included, and continues from next_cursor', async () => {
    const start = (await feed()).next_cursor;
    const question = (await post(asker, '/api/questions', questionBody())).json().data;
    const answer = (await post(helper, `/api/questions/${question.id}/answers`, { content: ANSWER })).json()
      .data;
    const comment = (
      await post(helper, `/api/questions/${question.id}/comments`, { content: COMMENT })
    ).json().data;
    await post(asker, `/api/answers/${answer.id}/accept`, { accepted: true });
    await world.runtime.database.query(sql`DELETE FROM comments WHERE id = ${comment.id}`);

    const page = await feed(`?since=${start}&types=question,answer,comment`);
    const seen = page.changes.map((c) => `${c.type}:${c.id}:${c.op}`);
    expect(seen).toEqual([
      `question:${question.id}:upsert`,
      `answer:${answer.id}:upsert`,
      // The question's answer count changed in the same transaction: a later upsert of it.
      `question:${question.id}:upsert`,
      `comment:${comment.id}:upsert`,
      `answer:${answer.id}:upsert`,
      `question:${question.id}:upsert`,
      `comment:${comment.id}:delete`,
    ]);
    const seqs = page.changes.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    for (const c of page.changes) expect(c.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // Users are a type of their own: the asker's counters changed.
    const users = await feed(`?since=${start}&types=user`);
    expect(users.changes.map((c) => c.id)).toContain(asker.id);
    expect(users.changes.every((c) => c.type === 'user')).toBe(true);

    // Nothing new since the last cursor; the same cursor again answers the same (empty) page.
    const after = await feed(`?since=${page.next_cursor}`);
    expect(after.changes).toEqual([]);
    expect((await feed(`?since=${after.next_cursor}`)).changes).toEqual([]);
  });

  it('pages with limit: each next_cursor continues exactly after the previous page', async () => {
    const all = (await feed('?limit=1000')).changes;
    expect(all.length).toBeGreaterThan(5);
    const walked: Change[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 100; i++) {
      const page = await feed(`?limit=2${cursor ? `&since=${cursor}` : ''}`);
      walked.push(...page.changes);
      cursor = page.next_cursor;
      if (page.changes.length < 2) break;
    }
    expect(walked).toEqual(all);
  });

  it('records nothing for a rolled-back write', async () => {
    const before = await changesRepository(world.runtime.database).lastSeq();
    await expect(
      world.runtime.database.db.transaction(async (tx) => {
        await tx.execute(
          sql`INSERT INTO questions (title, slug, content, author_id) VALUES ('Rolled back', 'rolled-back', 'x', ${asker.id})`,
        );
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // A write that fails validation inside the write path rolls back too.
    await post(asker, '/api/questions', questionBody({ category: 999_999 }));
    expect(await changesRepository(world.runtime.database).lastSeq()).toBe(before);
    const page = await feed(`?since=${encodeChangesCursor(before)}`);
    expect(page.changes).toEqual([]);
  });

  it('refuses bad values with 400 and an expired cursor with 410', async () => {
    expectError(await world.app.inject('/api/changes?types=question,poll'), 400);
    expectError(await world.app.inject('/api/changes?types='), 400);
    expectError(await world.app.inject('/api/changes?limit=0'), 400);
    expectError(await world.app.inject('/api/changes?limit=1001'), 400);
    expectError(await world.app.inject('/api/changes?since=not-a-cursor'), 400);
    expectError(await world.app.inject('/api/changes?since=%00'), 400);
    // A cursor past the feed's end was not written by this feed.
    expectError(await world.app.inject(`/api/changes?since=${encodeChangesCursor(10_000_000)}`), 400);

    const old = encodeChangesCursor(0);
    // Age every change past the retention and prune them: a cursor before them has expired.
    await world.runtime.database.query(sql`UPDATE qa_changes SET at = now() - interval '31 days'`);
    expect(await changesRepository(world.runtime.database).prune(30)).toBeGreaterThan(0);
    const gone = await world.app.inject(`/api/changes?since=${old}`);
    expectError(gone, 410);
    // Without a cursor the feed starts again after what was pruned.
    const fresh = await feed();
    expect(fresh.changes).toEqual([]);
    await post(asker, '/api/questions', questionBody());
    expect((await feed(`?since=${fresh.next_cursor}&types=question`)).changes).toHaveLength(1);
  });

  it('serves a repeated poll from the read cache, and a write (in this process or by another) shows at once', async () => {
    const head = (await feed()).next_cursor;
    const poll = `/api/changes?since=${head}`;
    // Pending notifications of earlier writes may empty the cache between two polls: retry the pair until none does.
    await vi.waitFor(
      async () => {
        await world.app.inject(poll);
        const again = await world.app.inject(poll);
        expect(again.headers['x-cache']).toBe('hit');
        expect(again.json().data).toMatchObject({ changes: [], next_cursor: head, has_more: false });
      },
      { timeout: 10_000, interval: 50 },
    );
    // A write through this process empties its cache before the write's answer: the same poll sees it.
    const created = (await post(asker, '/api/questions', questionBody())).json().data as { id: number };
    const page = await feed(`?since=${head}`);
    expect(page.changes.map((c) => [c.type, c.id])).toContainEqual(['question', created.id]);
    // Another process's write (here: SQL) empties it by its NOTIFY at commit.
    await world.runtime.database.query(
      sql`UPDATE questions SET title = 'Retitled by SQL' WHERE id = ${created.id}`,
    );
    await vi.waitFor(
      async () => {
        const next = await feed(`?since=${page.next_cursor}`);
        expect(next.changes.map((c) => [c.type, c.id, c.op])).toEqual([['question', created.id, 'upsert']]);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await world.app.inject('/api/changes');
    const etag = first.headers.etag as string;
    expect(etag).toBeTruthy();
    const again = await world.app.inject({ url: '/api/changes', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
  });
});
