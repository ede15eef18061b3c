import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, questionBody, writeWorld, type Writer } from './helpers.js';

describe('asking and editing questions', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let alice: Writer;
  let bob: Writer;

  beforeAll(async () => {
    world = await writeWorld({ QA_NEW_TAG_MIN_REPUTATION: '50' });
    alice = await world.writer('alice');
    bob = await world.writer('bob');
  });
  afterAll(() => world.close());

  const ask = (who: Writer, body: Record<string, unknown>) =>
    world.app.inject({ method: 'POST', url: '/api/questions', headers: who.auth, payload: body });

  it('creates a question (201) in the read shape, with a slug, the tags in order and a Location', async () => {
    const body = questionBody({
      title: '  How   do I keep my fermentation temperature stable?  ',
      tags: ['Yeast', 'brewing', 'yeast'],
      category: world.categoryId,
    });
    const res = await ask(alice, body);
    expect(res.statusCode).toBe(201);
    const { success, data } = res.json();
    expect(success).toBe(true);
    expect(data).toEqual({
      id: expect.any(Number),
      title: 'How do I keep my fermentation temperature stable?',
      slug: 'how-do-i-keep-my-fermentation-temperature-stable',
      // Markdown in, sanitised HTML out, the source alongside (docs/writes.md, "Content").
      content: `<p>${body.content}</p>`,
      content_markdown: body.content,
      votes: 0,
      views: 0,
      answers_count: 0,
      has_accepted: false,
      author: { id: alice.id, username: 'alice', avatar: expect.any(String) },
      tags: ['yeast', 'brewing'],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(res.headers.location).toBe(`/api/questions/${data.slug}`);

    const read = await world.app.inject(`/api/questions/${data.slug}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toMatchObject({ id: data.id, title: data.title, tags: ['yeast', 'brewing'] });
    const [counts] = await world.runtime.database.query<{ category: number; tag: number; user: number }>(
      sql`SELECT (SELECT questions_count FROM categories WHERE id = ${world.categoryId}) AS category,
                 (SELECT questions_count FROM tags WHERE name = 'yeast') AS tag,
                 (SELECT questions_count FROM users WHERE id = ${alice.id}) AS user`,
    );
    expect(counts).toEqual({ category: 1, tag: 1, user: 1 });
  });

  it('checks title and content lengths at their exact bounds, after trimming', async () => {
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ title: 'x'.repeat(14) }, 400],
      [{ title: `${'y'.repeat(14)}              ` }, 400],
      [{ title: 'a'.repeat(15) }, 201],
      [{ title: 'b'.repeat(150) }, 201],
      [{ title: 'c'.repeat(151) }, 400],
      [{ title: 'é'.repeat(150) }, 201],
      [{ content: 'z'.repeat(29) }, 400],
      [{ content: 'z'.repeat(30) }, 201],
      [{ content: 'w'.repeat(30_000) }, 201],
      [{ content: 'w'.repeat(30_001) }, 400],
    ];
    for (const [extra, status] of cases) {
      const res = await ask(bob, questionBody(extra));
      expect({ extra: JSON.stringify(extra).slice(0, 40), status: res.statusCode }).toEqual({
        extra: JSON.stringify(extra).slice(0, 40),
        status,
      });
      if (status === 400)
        expect(expectError(res, 400)).toMatch(/^(Title|Content) must be at (least|most) \d+ characters/);
    }
  });

  it('needs 1 to 5 existing tags, and creating a tag needs reputation or the admin scope', async () => {
    expect(expectError(await ask(alice, questionBody({ tags: [] })), 400)).toBe(
      'A question needs at least 1 tag',
    );
    expect(
      expectError(
        await ask(alice, questionBody({ tags: ['brewing', 'yeast', 'hops', 'ipa', 'lager', 'stout'] })),
        400,
      ),
    ).toMatch(/at most 5 tags/);
    expect(
      (await ask(alice, questionBody({ tags: ['brewing', 'yeast', 'hops', 'ipa', 'lager'] }))).statusCode,
    ).toBe(201);
    expectError(await ask(alice, questionBody({ tags: ['bad tag!'] })), 400);

    const unknown = expectError(await ask(alice, questionBody({ tags: ['brewing', 'kveik'] })), 400);
    expect(unknown).toBe('Unknown tag "kveik": creating a tag needs 50 reputation (you have 1)');
    const [tagRows] = await world.runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM tags WHERE name = 'kveik'`,
    );
    expect(tagRows!.n).toBe(0);

    const admin = await world.writer('root', ['qa:write', 'admin']);
    const created = await ask(admin, questionBody({ tags: ['kveik', 'c#'] }));
    expect(created.statusCode).toBe(201);
    expect(created.json().data.tags).toEqual(['kveik', 'c#']);
    const tagsNow = await world.runtime.database.query<{
      name: string;
      slug: string;
      questions_count: number;
    }>(sql`SELECT name, slug, questions_count FROM tags WHERE name IN ('kveik', 'c#') ORDER BY name`);
    expect(tagsNow).toEqual([
      { name: 'c#', slug: 'c-sharp', questions_count: 1 },
      { name: 'kveik', slug: 'kveik', questions_count: 1 },
    ]);

    await world.runtime.database.query(sql`UPDATE users SET reputation = 50 WHERE id = ${bob.id}`);
    expect((await ask(bob, questionBody({ tags: ['norwegian-farmhouse'] }))).statusCode).toBe(201);
  });

  it('refuses the same title from the same user within the window, but not from another user', async () => {
    const body = questionBody();
    expect((await ask(alice, body)).statusCode).toBe(201);
    expect(expectError(await ask(alice, { ...body, title: body.title.toUpperCase() }), 400)).toMatch(
      /with this title less than 60 seconds ago/,
    );
    const other = await ask(bob, body);
    expect(other.statusCode).toBe(201);
    // Same title, so the slug gets the first free suffix.
    expect(other.json().data.slug).toMatch(/-2$/);
  });

  it('refuses concurrent duplicate submissions but one', async () => {
    const body = questionBody();
    const results = await Promise.all(Array.from({ length: 5 }, () => ask(alice, body)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400, 400, 400, 400]);
  });

  it('makes unique slugs, never digits alone, and keeps them across title edits', async () => {
    const numeric = await ask(alice, questionBody({ title: '123456789012345678' }));
    expect(numeric.json().data.slug).toBe('q-123456789012345678');
    const title = 'Why does my stout taste like cardboard after bottling?';
    const slugs = [];
    for (const who of [alice, bob, await world.writer('carol')])
      slugs.push((await ask(who, questionBody({ title }))).json().data.slug);
    expect(slugs).toEqual([
      'why-does-my-stout-taste-like-cardboard-after-bottling',
      'why-does-my-stout-taste-like-cardboard-after-bottling-2',
      'why-does-my-stout-taste-like-cardboard-after-bottling-3',
    ]);
    const edited = await world.app.inject({
      method: 'PATCH',
      url: `/api/questions/${slugs[0]}`,
      headers: alice.auth,
      payload: { title: 'Why does my stout taste of wet cardboard after bottling?' },
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data).toMatchObject({
      title: 'Why does my stout taste of wet cardboard after bottling?',
      slug: slugs[0],
    });
  });

  it("edits the author's own question: title, content, tags (counts follow) and category", async () => {
    const created = (await ask(alice, questionBody({ tags: ['hops', 'ipa'] }))).json().data;
    const res = await world.app.inject({
      method: 'PATCH',
      url: `/api/questions/${created.id}`,
      headers: alice.auth,
      payload: {
        content: 'Edited: the ale now ferments at 19°C but still throws esters at the start.',
        tags: ['ipa', 'lager'],
        category: null,
      },
    });
    expect(res.json()).toMatchObject({
      success: true,
      data: { id: created.id, title: created.title, slug: created.slug, tags: ['ipa', 'lager'] },
    });
    expect(res.json().data.content).toMatch(/^<p>Edited:/);
    const [hops] = await world.runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM question_tags qt JOIN tags t ON t.id = qt.tag_id WHERE t.name = 'hops' AND qt.question_id = ${created.id}`,
    );
    expect(hops!.n).toBe(0);

    const moved = await world.app.inject({
      method: 'PATCH',
      url: `/api/questions/${created.id}`,
      headers: alice.auth,
      payload: { category: world.categoryId },
    });
    expect(moved.statusCode).toBe(200);
    const listed = await world.app.inject(`/api/questions?category=${world.categoryId}`);
    expect(listed.json().data.questions.map((q: { id: number }) => q.id)).toContain(created.id);
  });

  it("answers 403 for someone else's question, 404 for an unknown one, 400 for an empty or bad edit", async () => {
    const created = (await ask(alice, questionBody())).json().data;
    const patch = (who: Writer, url: string, payload: unknown) =>
      world.app.inject({ method: 'PATCH', url, headers: who.auth, payload: payload as object });
    expect(
      expectError(
        await patch(bob, `/api/questions/${created.id}`, {
          title: 'A title by someone who is not the author',
        }),
        403,
      ),
    ).toBe('Only the author can edit this question');
    expectError(
      await patch(alice, '/api/questions/999999', { title: 'A title for a question that does not exist' }),
      404,
    );
    expectError(
      await patch(alice, '/api/questions/no-such-slug', {
        title: 'A title for a question that does not exist',
      }),
      404,
    );
    expectError(await patch(alice, `/api/questions/${created.id}`, {}), 400);
    expectError(await patch(alice, `/api/questions/${created.id}`, { title: 'short' }), 400);
    expectError(await patch(alice, `/api/questions/${created.id}`, { category: 987654 }), 400);
    expectError(
      await patch(alice, `/api/questions/${created.id}`, { titel: 'A misspelt field name is refused' }),
      400,
    );
  });

  it('refuses bad bodies with 400: missing fields, wrong types, unknown category, not JSON', async () => {
    expectError(await ask(alice, { content: questionBody().content, tags: ['brewing'] }), 400);
    expectError(await ask(alice, questionBody({ title: 42 })), 400);
    expectError(await ask(alice, questionBody({ category: 987654 })), 400);
    const broken = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: { ...alice.auth, 'content-type': 'application/json' },
      payload: '{"title":',
    });
    expectError(broken, 400);
  });
});
