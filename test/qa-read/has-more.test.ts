import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pagination } from '../../shared/db/repositories/pagination.js';
import { badgeAwards } from '../../shared/db/schema/index.js';
import { writeWorld, type Writer } from '../qa-write/helpers.js';
import { addQuestion, addUser, at } from './fixtures.js';

/**
 * `has_more` on every list (issue 22: the Stack Exchange way of walking everything): true exactly when another page
 * exists, at the edges (last page, empty list, past the end, the end of a cursor walk); and the cursors of the lists
 * that had page numbers only (`/questions/{id}/linked`, `/badges`, `/webhooks/{id}/deliveries`) walk them in order,
 * with no gap and no duplicate, also while rows are added during the walk.
 */

interface Paged {
  pagination: Pagination;
  [list: string]: unknown;
}

describe(
  'has_more, and cursors on linked questions, site badges and webhook deliveries',
  { timeout: 120_000 },
  () => {
    let world: Awaited<ReturnType<typeof writeWorld>>;
    let owner: Writer;
    let stranger: Writer;
    let authorId: number;
    let target: number;
    let subscription: number;
    let otherSubscription: number;

    const get = async (url: string, who?: Writer) => {
      const res = await world.app.inject({ url, headers: who?.auth ?? {} });
      return { status: res.statusCode, body: res.json() };
    };
    const ok = async (url: string, who?: Writer): Promise<Paged> => {
      const res = await get(url, who);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.data as Paged;
    };
    const keysOf = (data: Paged, list: string, key: (row: Record<string, unknown>) => unknown) =>
      (data[list] as Record<string, unknown>[]).map(key);

    /** has_more is exactly next_cursor !== null, on a list with cursors. */
    const consistent = (data: Paged) => {
      expect(data.pagination.has_more).toBe(data.pagination.next_cursor !== null);
      expect(data.pagination.next_cursor).not.toBeUndefined();
    };

    /** Every page of `url` by cursor; `between` runs after each page but the last. */
    async function walkByCursor(
      url: string,
      list: string,
      key: (row: Record<string, unknown>) => unknown,
      who?: Writer,
      between?: () => Promise<void>,
    ): Promise<unknown[]> {
      const seen: unknown[] = [];
      let data = await ok(url, who);
      for (let guard = 0; guard < 100; guard++) {
        consistent(data);
        expect(data.pagination.current_page).toBe(guard + 1);
        seen.push(...keysOf(data, list, key));
        if (!data.pagination.has_more) return seen;
        await between?.();
        data = await ok(`${url}${url.includes('?') ? '&' : '?'}cursor=${data.pagination.next_cursor}`, who);
      }
      throw new Error('the walk did not end');
    }

    /** Every page of `url` by number, checking has_more on each (true on every page but the last). */
    async function walkByPage(
      url: string,
      list: string,
      key: (row: Record<string, unknown>) => unknown,
      limit: number,
      expected: number,
      who?: Writer,
    ): Promise<unknown[]> {
      const seen: unknown[] = [];
      const pages = Math.ceil(expected / limit);
      for (let page = 1; page <= pages; page++) {
        const data = await ok(`${url}&limit=${limit}&page=${page}`, who);
        consistent(data);
        expect(data.pagination).toMatchObject({
          current_page: page,
          total_items: expected,
          has_more: page < pages,
        });
        seen.push(...keysOf(data, list, key));
      }
      // Past the end: nothing, and nothing more.
      const past = await ok(`${url}&limit=${limit}&page=${pages + 1}`, who);
      expect(past[list]).toEqual([]);
      expect(past.pagination).toMatchObject({ has_more: false, next_cursor: null });
      return seen;
    }

    const id = (row: Record<string, unknown>) => row.id;

    beforeAll(async () => {
      world = await writeWorld({ QA_READ_CACHE_TTL_MS: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
      owner = await world.writer('hook-owner', ['webhooks']);
      stranger = await world.writer('stranger', ['webhooks']);
      const db = world.runtime.database.db;
      authorId = (await addUser(db, { username: 'linker' })).id;
      target = (await addQuestion(db, { authorId, createdAt: at(0) })).id;
      // 13 linked questions: duplicates and plain links, in both directions.
      for (let i = 0; i < 13; i++) {
        const q = (await addQuestion(db, { authorId, createdAt: at(i + 1) })).id;
        const kind = i % 4 === 0 ? 'duplicate' : 'link';
        if (i % 3 !== 1)
          await world.runtime.database.query(
            sql`INSERT INTO post_links (question_id, related_question_id, source, kind)
              VALUES (${target}, ${q}, 'import', ${kind})`,
          );
        if (i % 3 !== 0)
          await world.runtime.database.query(
            sql`INSERT INTO post_links (question_id, related_question_id, source, kind)
              VALUES (${q}, ${target}, 'import', 'link')`,
          );
      }
      // Site badges: names shared across classes and tag flags, award counts that tie.
      const awards: {
        name: string;
        class: 'gold' | 'silver' | 'bronze';
        tagBased: boolean;
        times: number;
      }[] = [
        { name: 'Student', class: 'bronze', tagBased: false, times: 3 },
        { name: 'Teacher', class: 'bronze', tagBased: false, times: 3 },
        { name: 'Famous', class: 'gold', tagBased: false, times: 1 },
        { name: 'Famous', class: 'silver', tagBased: false, times: 1 },
        { name: 'Famous', class: 'bronze', tagBased: false, times: 2 },
        { name: 'python', class: 'gold', tagBased: true, times: 1 },
        { name: 'python', class: 'silver', tagBased: true, times: 2 },
        { name: 'python', class: 'bronze', tagBased: true, times: 3 },
        { name: 'python', class: 'bronze', tagBased: false, times: 1 },
        { name: 'Critic', class: 'bronze', tagBased: false, times: 2 },
        { name: 'Epic', class: 'silver', tagBased: false, times: 1 },
      ];
      for (const [i, a] of awards.entries())
        for (let n = 0; n < a.times; n++)
          await db.insert(badgeAwards).values({
            userId: authorId,
            name: a.name,
            class: a.class,
            tagBased: a.tagBased,
            awardedAt: at(100 + i),
          });
      // Two subscriptions of the owner; 11 deliveries of the first, on 4 instants (the uuid breaks ties).
      const subscribe = async () => {
        const [row] = await world.runtime.database.query<{ id: number }>(
          sql`INSERT INTO webhook_subscriptions (user_id, url, events, since_seq)
            VALUES (${owner.id}, 'https://hooks.example/x', '{question.created}', 0) RETURNING id`,
        );
        return row!.id;
      };
      subscription = await subscribe();
      otherSubscription = await subscribe();
      for (let i = 0; i < 11; i++) await addDelivery(subscription, at(200 + (i % 4)));
      await addDelivery(otherSubscription, at(200));
    });
    afterAll(() => world?.close());

    async function addDelivery(subscriptionId: number, createdAt: Date) {
      await world.runtime.database.query(
        sql`INSERT INTO deliveries (id, subject, event, url, secret, body, max_attempts, backoff_ms, created_at)
          VALUES (gen_random_uuid(), ${`webhook:${subscriptionId}`}, 'ping', 'https://hooks.example/x', 's', '{}',
                  3, 1000, ${createdAt.toISOString()}::timestamptz)`,
      );
    }

    const linkedReference = async () =>
      (
        await world.runtime.database.query<{ id: number }>(
          sql`SELECT id FROM (
              SELECT related_question_id AS id, kind FROM post_links WHERE question_id = ${target}
              UNION ALL SELECT question_id, kind FROM post_links WHERE related_question_id = ${target}
            ) l GROUP BY id ORDER BY bool_or(kind = 'duplicate') DESC, id DESC`,
        )
      ).map((r) => r.id);

    it('/questions/{id}/linked: pages and cursors give duplicates first, then newest id, with has_more', async () => {
      const expected = await linkedReference();
      expect(expected).toHaveLength(13);
      const url = `/api/questions/${target}/linked?x=1`;
      expect(await walkByPage(url, 'questions', id, 4, 13)).toEqual(expected);
      expect(await walkByCursor(`${url}&limit=4`, 'questions', id)).toEqual(expected);
      // A page size that divides the list: the last full page says no more.
      const data = await ok(`${url}&limit=13`);
      expect(data.pagination).toMatchObject({ has_more: false, next_cursor: null, total_pages: 1 });
      // Without links: an empty list, nothing more.
      const lonely = (await addQuestion(world.runtime.database.db, { authorId })).id;
      const empty = await ok(`/api/questions/${lonely}/linked`);
      expect(empty).toEqual({
        questions: [],
        pagination: {
          current_page: 1,
          total_pages: 0,
          total_items: 0,
          per_page: 20,
          has_more: false,
          next_cursor: null,
        },
      });
    });

    it('/questions/{id}/linked: a cursor walk while links are added shows every link that stayed, once', async () => {
      const before = await linkedReference();
      const db = world.runtime.database.db;
      const seen = await walkByCursor(
        `/api/questions/${target}/linked?limit=3`,
        'questions',
        id,
        undefined,
        async () => {
          const q = (await addQuestion(db, { authorId })).id;
          await world.runtime.database.query(
            sql`INSERT INTO post_links (question_id, related_question_id, source, kind)
            VALUES (${q}, ${target}, 'import', 'link')`,
          );
        },
      );
      expect(new Set(seen).size).toBe(seen.length);
      for (const linked of before) expect(seen).toContain(linked);
      // Another question's cursor is refused.
      const first = await ok(`/api/questions/${target}/linked?limit=2`);
      const other = await get(
        `/api/questions/${before[0]}/linked?limit=2&cursor=${first.pagination.next_cursor}`,
      );
      expect(other.status).toBe(400);
    });

    it.each([
      ['class', sql`rank, name, tag_based`],
      ['name', sql`name, rank, tag_based`],
      ['awards', sql`award_count DESC, name, rank, tag_based`],
    ] as const)(
      '/badges?sort=%s: pages and cursors give the same order, with has_more',
      async (sort, order) => {
        const expected = (
          await world.runtime.database.query<{ name: string; class: string; tag_based: boolean }>(
            sql`SELECT name, class, tag_based FROM (
              SELECT name, class, tag_based, CASE class WHEN 'gold' THEN 1 WHEN 'silver' THEN 2 ELSE 3 END AS rank,
                     count(*) AS award_count
              FROM badge_awards GROUP BY name, class, tag_based) g
            ORDER BY ${order}`,
          )
        ).map((b) => `${b.name}/${b.class}/${b.tag_based}`);
        expect(expected).toHaveLength(11);
        const key = (b: Record<string, unknown>) =>
          `${b.name as string}/${b.class as string}/${String(b.tag_based)}`;
        expect(await walkByPage(`/api/badges?sort=${sort}`, 'badges', key, 3, 11)).toEqual(expected);
        expect(await walkByCursor(`/api/badges?sort=${sort}&limit=3`, 'badges', key)).toEqual(expected);
        expect(await walkByCursor(`/api/badges?sort=${sort}&limit=11`, 'badges', key)).toEqual(expected);
        // A cursor of another sort is refused.
        const first = await ok(`/api/badges?sort=${sort}&limit=2`);
        const otherSort = sort === 'name' ? 'class' : 'name';
        expect(
          (await get(`/api/badges?sort=${otherSort}&cursor=${first.pagination.next_cursor}`)).status,
        ).toBe(400);
      },
    );

    it('/webhooks/{id}/deliveries: pages and cursors give newest first (ties by id), with has_more', async () => {
      const reference = async () =>
        (
          await world.runtime.database.query<{ id: string }>(
            sql`SELECT id::text AS id FROM deliveries WHERE subject = ${`webhook:${subscription}`}
              ORDER BY created_at DESC, id DESC`,
          )
        ).map((r) => r.id);
      const expected = await reference();
      expect(expected).toHaveLength(11);
      const url = `/api/webhooks/${subscription}/deliveries?x=1`;
      expect(await walkByPage(url, 'deliveries', id, 4, 11, owner)).toEqual(expected);
      expect(await walkByCursor(`${url}&limit=4`, 'deliveries', id, owner)).toEqual(expected);
      // New deliveries during a walk (newer, so before the cursor) are not shown; every delivery that stayed is, once.
      const seen = await walkByCursor(`${url}&limit=3`, 'deliveries', id, owner, () =>
        addDelivery(subscription, at(300)),
      );
      expect(seen).toEqual(expected);
      // The other subscription's cursor is refused, and another user's subscription is still a 404.
      const other = await ok(`/api/webhooks/${otherSubscription}/deliveries?limit=1`, owner);
      expect(other.pagination).toMatchObject({ total_items: 1, has_more: false, next_cursor: null });
      const first = await ok(`${url}&limit=2`, owner);
      const refused = await get(
        `/api/webhooks/${otherSubscription}/deliveries?cursor=${first.pagination.next_cursor}`,
        owner,
      );
      expect(refused.status).toBe(400);
      expect((await get(`${url}&limit=2`, stranger)).status).toBe(404);
      const edited = await get(`${url}&cursor=${Buffer.from('{"v":1}').toString('base64url')}`, owner);
      expect(edited.status).toBe(400);
    });

    it('/questions, /users, /tags: has_more on the last page, an empty list, past the end and a walk end', async () => {
      const total = (await ok('/api/questions?limit=1')).pagination.total_items;
      expect(total).toBeGreaterThan(5);
      const last = await ok(`/api/questions?limit=5&page=${Math.ceil(total / 5)}`);
      expect(last.pagination).toMatchObject({ has_more: false, next_cursor: null });
      const beforeLast = await ok(`/api/questions?limit=5&page=${Math.ceil(total / 5) - 1}`);
      expect(beforeLast.pagination.has_more).toBe(true);
      consistent(beforeLast);
      const exact = await ok(`/api/questions?limit=${total}`);
      expect(exact.pagination).toMatchObject({ total_pages: 1, has_more: false, next_cursor: null });
      expect((await ok('/api/questions?tag=no-such-tag')).pagination).toMatchObject({
        total_items: 0,
        has_more: false,
        next_cursor: null,
      });
      expect((await ok(`/api/questions?page=${total + 1}&limit=1`)).pagination.has_more).toBe(false);
      const walked = await walkByCursor('/api/questions?limit=4', 'questions', id);
      expect(new Set(walked).size).toBe(total);

      const users = await ok('/api/users?limit=1');
      expect(users.pagination.has_more).toBe(users.pagination.total_items > 1);
      const userWalk = await walkByCursor('/api/users?limit=2', 'users', id);
      expect(userWalk).toHaveLength(users.pagination.total_items);

      const tags = await ok('/api/tags?limit=100');
      expect(tags.pagination).toMatchObject({ has_more: false, next_cursor: null });
      expect(await walkByCursor('/api/tags?limit=4', 'tags', id)).toEqual(keysOf(tags, 'tags', id));
    });

    it('a first page and a cursor page carry the counter read in their own statement, exact when the cursor finds no row', async () => {
      const query = world.runtime.database.query.bind(world.runtime.database);
      await query(
        sql`INSERT INTO tags (name, slug) VALUES ('zzz-first', 'zzz-first'), ('zzz-last', 'zzz-last')`,
      );
      const [counted] = await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM tags`);
      const n = counted!.n;
      const first = await ok(`/api/tags?sort=name&limit=${n - 1}`);
      expect(first.pagination).toMatchObject({ total_items: n, has_more: true, current_page: 1 });
      expect(keysOf(first, 'tags', (t) => t.slug).at(-1)).toBe('zzz-first');
      // The only row after the cursor goes: the cursor's page is empty, and its total still the counter's.
      await query(sql`DELETE FROM tags WHERE slug = 'zzz-last'`);
      const after = await ok(`/api/tags?sort=name&limit=${n - 1}&cursor=${first.pagination.next_cursor}`);
      expect(after.tags).toEqual([]);
      expect(after.pagination).toMatchObject({ total_items: n - 1, has_more: false, next_cursor: null });
      expect((await ok(`/api/tags?sort=name&limit=${n - 1}`)).pagination).toMatchObject({
        total_items: n - 1,
        has_more: false,
      });
      await query(sql`DELETE FROM tags WHERE slug = 'zzz-first'`);
    });

    it('/users/{id}/timeline: has_more beside next_cursor, false at the end', async () => {
      let cursor: string | null = null;
      const seen: unknown[] = [];
      for (let guard = 0; guard < 50; guard++) {
        const res = await get(`/api/users/${authorId}/timeline?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        const data = res.body.data as { events: unknown[]; next_cursor: string | null; has_more: boolean };
        expect(data.has_more).toBe(data.next_cursor !== null);
        seen.push(...data.events);
        cursor = data.next_cursor;
        if (!data.has_more) break;
      }
      expect(cursor).toBeNull();
      expect(seen.length).toBeGreaterThan(4);
    });

    it('/changes: has_more while committed changes remain after the page, false once caught up', async () => {
      type Feed = { changes: { seq: number }[]; next_cursor: string; has_more: boolean };
      const feed = async (query: string) => {
        const res = await get(`/api/changes?types=question&${query}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.data as Feed;
      };
      const all = await feed('limit=1000');
      const count = all.changes.length;
      expect(count).toBeGreaterThan(3);
      expect(all.has_more).toBe(false);
      // A page that holds exactly every change: nothing more.
      expect((await feed(`limit=${count}`)).has_more).toBe(false);
      // One short: more, and the next page is the last change, then nothing.
      const first = await feed(`limit=${count - 1}`);
      expect(first.has_more).toBe(true);
      const second = await feed(`limit=${count - 1}&since=${first.next_cursor}`);
      expect(second.changes.map((c) => c.seq)).toEqual([all.changes.at(-1)!.seq]);
      expect(second.has_more).toBe(false);
      const caughtUp = await feed(`since=${second.next_cursor}`);
      expect(caughtUp).toMatchObject({ changes: [], has_more: false });
    });
  },
);
