import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { CANDIDATES } from '../../shared/db/repositories/search.js';
import { questions } from '../../shared/db/schema/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addAnswer, addQuestion, addTag, addUser, at } from './fixtures.js';

interface Hit {
  type: 'question' | 'answer' | 'user';
  id: number;
  score: number;
  excerpt?: string;
}

describe('GET /api/search', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const ids: Record<string, number> = {};

  const search = async (query: string) => {
    const res = await app.inject(`/api/search?${query}`);
    return { status: res.statusCode, body: res.json() };
  };
  const keys = (results: Hit[]) => results.map((r) => `${r.type}:${r.id}`);

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    const brewer = await addUser(db, {
      username: 'fermentation_fan',
      displayName: 'Yeast Wrangler',
      reputation: 42,
    });
    const other = await addUser(db, {
      username: 'zymurgist',
      displayName: 'Charlotte Hopkins',
      avatar: 'https://example.test/z.png',
    });
    ids.brewer = brewer.id;
    ids.other = other.id;
    const yeastTag = await addTag(db, 'yeast');
    ids.title = (
      await addQuestion(db, {
        authorId: brewer.id,
        title: 'Fermentation stuck after two days',
        slug: 'fermentation-stuck',
        content: '<p>My airlock stopped bubbling. Gravity reads 1.030 &amp; falling slowly.</p>',
        createdAt: at(0),
      })
    ).id;
    ids.tagged = (
      await addQuestion(db, {
        authorId: other.id,
        title: 'Pitching rate for a big beer',
        slug: 'pitching-rate',
        content: 'How many packets do I need?',
        tagIds: [yeastTag.id],
        createdAt: at(1),
      })
    ).id;
    ids.body = (
      await addQuestion(db, {
        authorId: other.id,
        title: 'Temperature control on a budget',
        slug: 'temperature-control',
        content:
          'I use a swamp cooler; the yeast seems happy. <script>alert(1)</script> When a < b the fermentation smells of sulfur.',
        createdAt: at(2),
      })
    ).id;
    ids.phrase = (
      await addQuestion(db, {
        authorId: other.id,
        title: 'Dry hopping questions',
        slug: 'dry-hopping',
        content: 'When is the best time for dry hopping during secondary fermentation?',
        createdAt: at(3),
      })
    ).id;
    ids.answer = (
      await addAnswer(db, {
        questionId: ids.title!,
        authorId: other.id,
        content: 'Rouse the yeast and raise the temperature; stuck fermentation often restarts.',
        isAccepted: true,
        votes: 4,
      })
    ).id;
    // Enough matches of one word to need a second page.
    for (let i = 0; i < 25; i++) {
      await addQuestion(db, {
        authorId: other.id,
        title: `Kettle note ${i}`,
        content: `The kettle boiled over again (${i}).`,
      });
    }
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('ranks a title match above a tag match above a body match (weights A > B > C)', async () => {
    const { status, body } = await search('q=yeast&type=questions');
    expect(status).toBe(200);
    // "yeast": the tagged question (tag B) and the body question (C); the title question has it nowhere.
    expect(keys(body.data.results)).toEqual([`question:${ids.tagged}`, `question:${ids.body}`]);
    const fermentation = await search('q=fermentation&type=questions');
    expect(keys(fermentation.body.data.results)[0]).toBe(`question:${ids.title}`);
    expect(keys(fermentation.body.data.results)).toEqual(
      expect.arrayContaining([`question:${ids.title}`, `question:${ids.body}`, `question:${ids.phrase}`]),
    );
    const scores = fermentation.body.data.results.map((r: Hit) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('renders question results with what a client needs, the excerpt highlighted and escaped', async () => {
    const { body } = await search('q=sulfur&type=questions');
    expect(body.data.results).toEqual([
      {
        type: 'question',
        id: ids.body,
        score: expect.any(Number),
        title: 'Temperature control on a budget',
        slug: 'temperature-control',
        excerpt: expect.stringContaining('<mark>sulfur</mark>'),
        votes: 0,
        answers_count: 0,
        has_accepted: false,
        tags: [],
        created_at: '2024-01-01T00:02:00.000Z',
      },
    ]);
    const excerpt: string = body.data.results[0].excerpt;
    // Markup of the body never reaches the excerpt; a literal "<" is escaped.
    expect(excerpt).not.toMatch(/<(?!\/?mark>)/);
    expect(excerpt).toContain('a &lt; b');
    const entity = await search('q=gravity&type=questions');
    expect(entity.body.data.results[0].excerpt).toContain('1.030 &amp; falling');
  });

  it('renders answer results with their question', async () => {
    const { body } = await search('q=rouse&type=answers');
    expect(body.data.results).toEqual([
      {
        type: 'answer',
        id: ids.answer,
        score: expect.any(Number),
        question_id: ids.title,
        question_title: 'Fermentation stuck after two days',
        question_slug: 'fermentation-stuck',
        excerpt: expect.stringContaining('<mark>Rouse</mark>'),
        votes: 4,
        is_accepted: true,
        created_at: expect.stringMatching(/Z$/),
      },
    ]);
  });

  it('supports quoted phrases and -exclusion', async () => {
    const phrase = await search(`q=${encodeURIComponent('"dry hopping"')}&type=questions`);
    expect(keys(phrase.body.data.results)).toEqual([`question:${ids.phrase}`]);
    const reversed = await search(`q=${encodeURIComponent('"hopping dry"')}&type=questions`);
    expect(reversed.body.data.results).toEqual([]);
    const excluded = await search(`q=${encodeURIComponent('fermentation -sulfur -hopping')}&type=questions`);
    expect(keys(excluded.body.data.results)).toEqual([`question:${ids.title}`]);
  });

  it('finds users by partial username and display name (trigram)', async () => {
    const partial = await search('q=zymurg&type=users');
    expect(partial.body.data.results).toEqual([
      {
        type: 'user',
        id: ids.other,
        score: expect.any(Number),
        username: 'zymurgist',
        display_name: 'Charlotte Hopkins',
        avatar: 'https://example.test/z.png',
        reputation: 1,
      },
    ]);
    expect(keys((await search('q=hopkins&type=users')).body.data.results)).toEqual([`user:${ids.other}`]);
    expect(keys((await search('q=wrangle&type=users')).body.data.results)).toEqual([`user:${ids.brewer}`]);
    expect(keys((await search('q=ferment&type=users')).body.data.results)).toEqual([`user:${ids.brewer}`]);
  });

  it('type=all merges every kind by one score, not by kind', async () => {
    const { body } = await search('q=fermentation');
    const results: Hit[] = body.data.results;
    const kinds = new Set(results.map((r) => r.type));
    expect(kinds).toEqual(new Set(['question', 'answer', 'user']));
    const scores = results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // Questions, answers and users interleave by score: the answer is not after every question.
    const answerAt = results.findIndex((r) => r.type === 'answer');
    const lastQuestion = results.map((r) => r.type).lastIndexOf('question');
    expect(answerAt).toBeLessThan(lastQuestion);
    const typed = await Promise.all(
      ['questions', 'answers', 'users'].map((t) => search(`q=fermentation&type=${t}`)),
    );
    expect(body.data.pagination.total_items).toBe(
      typed.reduce((n, r) => n + r.body.data.pagination.total_items, 0),
    );
  });

  it('pages 20 results at a time without overlap', async () => {
    const first = await search('q=kettle');
    const second = await search('q=kettle&page=2');
    expect(first.body.data.pagination).toEqual({
      current_page: 1,
      total_pages: 2,
      total_items: 25,
      per_page: 20,
      has_more: true,
    });
    expect(first.body.data.results).toHaveLength(20);
    expect(second.body.data.results).toHaveLength(5);
    const all = [...keys(first.body.data.results), ...keys(second.body.data.results)];
    expect(new Set(all).size).toBe(25);
    expect((await search('q=kettle&page=3')).body.data.results).toEqual([]);
    expect((await search('q=kettle&limit=5&page=5')).body.data.results).toHaveLength(5);
  });

  it('ranks at most the CANDIDATES most recent matches of a kind, and counts those', async () => {
    const db = runtime.database.db;
    const rows = Array.from({ length: CANDIDATES + 5 }, (_, i) => ({
      authorId: ids.other!,
      title: `Zebra stripes ${i}`,
      slug: `zebra-${i}`,
      content: 'Plain body.',
    }));
    const inserted = await db.insert(questions).values(rows).returning({ id: questions.id });
    const { body } = await search('q=zebra&type=questions&limit=100&page=10');
    expect(body.data.pagination).toEqual({
      current_page: 10,
      total_pages: CANDIDATES / 100,
      total_items: CANDIDATES,
      per_page: 100,
      has_more: false,
      // A kind reached its candidates: the total is a lower bound.
      total_bounded: true,
    });
    const oldest = inserted.slice(0, 5).map((r) => r.id);
    const seen = new Set<number>();
    for (let page = 1; page <= CANDIDATES / 100; page++) {
      for (const r of (await search(`q=zebra&type=questions&limit=100&page=${page}`)).body.data.results)
        seen.add(r.id);
    }
    expect(seen.size).toBe(CANDIDATES);
    expect(oldest.some((id) => seen.has(id))).toBe(false);
  });

  it.each(['the', 'and of the', '!!!', '"', '-', '&|!()', ':*', "'", 'or'])(
    'a query of stop words or punctuation (%s) finds nothing, without an error',
    async (q) => {
      const { status, body } = await search(`q=${encodeURIComponent(q)}&type=questions`);
      expect(status).toBe(200);
      expect(body.data).toEqual({
        results: [],
        pagination: { current_page: 1, total_pages: 0, total_items: 0, per_page: 20, has_more: false },
      });
    },
  );

  it.each([
    "'; DROP TABLE questions; --",
    '%',
    '_',
    '\\',
    '%_%\\',
    'ünïcödé 🍺 ферментация 発酵',
    'a'.repeat(200),
    '<mark>x</mark>',
    'fermentation <-> yeast',
    'fermentation & !yeast',
  ])('answers 200 for the awkward query %s', async (q) => {
    for (const type of ['all', 'questions', 'answers', 'users']) {
      const { status, body } = await search(`q=${encodeURIComponent(q)}&type=${type}`);
      expect(status).toBe(200);
      expect(body.success).toBe(true);
    }
    // The tables are intact.
    expect((await search('q=kettle&type=questions')).body.data.pagination.total_items).toBe(25);
  });

  it('matches percent and underscore literally in user names', async () => {
    expect(keys((await search('q=n_f&type=users')).body.data.results)).toEqual([`user:${ids.brewer}`]);
    // As wildcards, `_` and `%` would match "fermentation_fan" here.
    expect((await search('q=f_r&type=users')).body.data.results).toEqual([]);
    expect((await search('q=t%25o&type=users')).body.data.results).toEqual([]);
  });

  it('matches a text of one or two characters at the start of a name only', async () => {
    expect(keys((await search('q=Fe&type=users')).body.data.results)).toEqual([`user:${ids.brewer}`]);
    expect(keys((await search('q=z&type=users')).body.data.results)).toHaveLength(1);
    expect((await search('q=an&type=users')).body.data.results).toEqual([]);
    expect((await search('q=_&type=users')).body.data.results).toEqual([]);
  });

  it.each([
    ['', 'missing q'],
    ['q=', 'empty q'],
    ['q=%20%20%09', 'blank q'],
    [`q=${'a'.repeat(201)}`, 'q over 200 characters'],
    ['q=x&type=bogus', 'unknown type'],
    ['q=x&type=', 'empty type'],
    ['q=x&page=0', 'page 0'],
    ['q=x&page=abc', 'page not a number'],
    ['q=x&q=y', 'repeated q'],
    ['q=x&type=users&type=all', 'repeated type'],
  ])('%s (%s) is a 400', async (query) => {
    const { status, body } = await search(query);
    expect(status).toBe(400);
    expect(body).toEqual({ error: true, message: expect.any(String), code: 400 });
  });
});
