import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError, writeWorld, type Writer } from '../qa-write/helpers.js';

const CONTENT = 'Some context that is long enough to pass the minimum content length of a post.';
/** A body that says the title again and nothing else, so that bodies add no words in common. */
const own = (title: string) => `${title} ${title}`;

describe('related, linked and similar questions', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let asker: Writer;
  let helper: Writer;

  beforeAll(async () => {
    world = await writeWorld({ PUBLIC_URL: 'https://agora.example' });
    asker = await world.writer('asker');
    helper = await world.writer('helper');
  });
  afterAll(() => world.close());

  const ask = async (title: string, tags: string[], content = own(title)) => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: asker.auth,
      payload: { title, content, tags },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; slug: string };
  };
  const get = async (url: string) => {
    const res = await world.app.inject(url);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  it('related: looks questions up by their rarest words, so an old one sharing a rare word beats many new common ones', async () => {
    const old = await ask('Kveik pitched warm: is that fine?', ['yeast']);
    // More newer questions share the common words than any one word's lookup takes (MATCHES_PER_TERM).
    for (let i = 0; i < 160; i++)
      await ask(`Pitched yeast warm, batch number ${i}: is that fine?`, ['yeast']);
    const source = await ask('Kveik yeast pitched warm', ['yeast']);
    const { questions } = await get(`/api/questions/${source.id}/related`);
    expect(questions[0].id).toBe(old.id);
  });

  it('related: text similarity first, shared tags break near ties; never the question itself', async () => {
    const source = await ask('How long should a stout ferment at cold temperature?', ['stout', 'yeast']);
    const sameTags = await ask('How long does a stout ferment when the temperature is cold?', [
      'stout',
      'yeast',
    ]);
    const otherTags = await ask('How long does a stout ferment when the temperature is cold here?', [
      'lager',
    ]);
    const unrelated = await ask('Which hops give an IPA a citrus aroma?', ['hops', 'ipa']);

    const { questions } = await get(`/api/questions/${source.id}/related`);
    const ids = questions.map((q: { id: number }) => q.id);
    expect(ids).not.toContain(source.id);
    expect(ids).not.toContain(unrelated.id);
    expect(ids.slice(0, 2)).toEqual([sameTags.id, otherTags.id]);
    expect(questions[0]).toEqual({
      id: sameTags.id,
      title: 'How long does a stout ferment when the temperature is cold?',
      slug: sameTags.slug,
      votes: 0,
      answers_count: 0,
      has_accepted: false,
      tags: ['stout', 'yeast'],
      created_at: expect.stringMatching(/Z$/),
      score: expect.any(Number),
    });
    const scores = questions.map((q: { score: number }) => q.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // By slug as well; limit bounds it.
    expect((await get(`/api/questions/${source.slug}/related?limit=1`)).questions).toHaveLength(1);

    expectError(await world.app.inject('/api/questions/999999/related'), 404);
    expectError(await world.app.inject(`/api/questions/${source.id}/related?limit=0`), 400);
    expectError(await world.app.inject(`/api/questions/${source.id}/related?limit=31`), 400);
  });

  it('linked: links in bodies, both directions, kept up to date on edits; PostLinks duplicates marked', async () => {
    const target = await ask('What is the ideal mash temperature for a dry beer?', ['brewing']);
    const other = await ask('Can I dry hop during primary fermentation?', ['hops']);
    const linking = await ask(
      'Mash temperature and body of the beer',
      ['brewing'],
      `${CONTENT} See [this](/questions/${target.id}/x).`,
    );
    // An answer's links count for its question; a link to another site's /questions/ page does not.
    const answer = await world.app.inject({
      method: 'POST',
      url: `/api/questions/${other.id}/answers`,
      headers: helper.auth,
      payload: {
        content: `${CONTENT} Compare [ours](https://agora.example/questions/${target.id}) and [theirs](https://stackoverflow.com/questions/${linking.id}/foo).`,
      },
    });
    expect(answer.statusCode, answer.body).toBe(201);

    const linked = await get(`/api/questions/${target.id}/linked`);
    expect(linked.questions.map((q: { id: number; direction: string }) => [q.id, q.direction])).toEqual([
      [linking.id, 'incoming'],
      [other.id, 'incoming'],
    ]);
    expect(linked.pagination).toMatchObject({ total_items: 2, current_page: 1 });
    expect((await get(`/api/questions/${linking.id}/linked`)).questions).toMatchObject([
      { id: target.id, direction: 'outgoing', is_duplicate: false },
    ]);

    // Editing the link away removes it.
    const edit = await world.app.inject({
      method: 'PATCH',
      url: `/api/questions/${linking.id}`,
      headers: asker.auth,
      payload: { content: `${CONTENT} No link any more.` },
    });
    expect(edit.statusCode).toBe(200);
    expect(
      (await get(`/api/questions/${target.id}/linked`)).questions.map((q: { id: number }) => q.id),
    ).toEqual([other.id]);

    // An imported duplicate link (the loader writes source 'import' rows) comes first and is marked.
    await world.runtime.database.query(
      sql`INSERT INTO post_links (question_id, related_question_id, source, kind) VALUES (${linking.id}, ${target.id}, 'import', 'duplicate')`,
    );
    // The read cache learns of the SQL write by a notification: wait for it.
    await vi.waitFor(
      async () => {
        const afterImport = (await get(`/api/questions/${target.id}/linked`)).questions;
        expect(afterImport.map((q: { id: number; is_duplicate: boolean }) => [q.id, q.is_duplicate])).toEqual(
          [
            [linking.id, true],
            [other.id, false],
          ],
        );
      },
      { timeout: 10_000 },
    );
    const page2 = await get(`/api/questions/${target.id}/linked?limit=1&page=2`);
    expect(page2.questions.map((q: { id: number }) => q.id)).toEqual([other.id]);

    expectError(await world.app.inject('/api/questions/999999/linked'), 404);
    expectError(await world.app.inject(`/api/questions/${target.id}/linked?limit=101`), 400);
  });

  it('similar: matches a title being typed, boosted by tags; 400 for bad values', async () => {
    const lager = await ask('Why does my lager taste of green apples?', ['lager']);
    const ale = await ask('Why does my ale taste like green apples sometimes?', ['yeast']);
    const plain = (await get(`/api/similar?title=${encodeURIComponent('lager tastes of green apple')}`))
      .questions;
    expect(plain.map((q: { id: number }) => q.id)).toContain(lager.id);
    expect(plain.map((q: { id: number }) => q.id)).toContain(ale.id);
    const boosted = (
      await get(`/api/similar?title=${encodeURIComponent('tastes like green apples')}&tag=yeast;brewing`)
    ).questions;
    expect(boosted[0].id).toBe(ale.id);
    expect((await get('/api/similar?title=the')).questions).toEqual([]);

    expectError(await world.app.inject('/api/similar'), 400);
    expectError(await world.app.inject('/api/similar?title=%20%20'), 400);
    expectError(await world.app.inject(`/api/similar?title=${'x'.repeat(201)}`), 400);
    expectError(await world.app.inject('/api/similar?title=apples&tag=a;b;c;d;e;f'), 400);
    expectError(await world.app.inject('/api/similar?title=apples&tag=a;;b'), 400);
    expectError(await world.app.inject('/api/similar?title=apples&limit=0'), 400);
  });

  it('serves ETags and 304s', async () => {
    const first = await world.app.inject('/api/similar?title=apples');
    const again = await world.app.inject({
      url: '/api/similar?title=apples',
      headers: { 'if-none-match': first.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
  });
});
