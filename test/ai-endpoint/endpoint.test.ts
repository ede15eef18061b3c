import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { AI_MAX_CONTENT_LENGTH } from '../../shared/ai/index.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { insertKveikPosts, type KveikPosts } from './support/kveik.js';
import { createAuthor, deleteTag, insertQuestion, loadBeerDump, type LoadedSite } from './support/site.js';

/**
 * POST /api/ai.php end to end: the Q&A app, a real `ai` worker pool (in process) on its own Redis prefix, the beer
 * dump in PostgreSQL. The worker's tag index is rebuilt by the real rebuild job before the tag tests.
 */

const SPAM =
  'BUY CHEAP PILLS NOW!!! Best prices guaranteed, visit http://cheap-pills.example.com and http://pills.example.net ' +
  'or call +1 555 123 4567, WhatsApp me for a discount $$$$';
const STORAGE_QUESTION =
  'How long can I keep bottles of stout in storage before they go stale? I keep them in a cellar at a cool temperature ' +
  'and wonder whether aging them for a few years changes the taste.';

describe('POST /api/ai.php', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let pool: WorkerPool;
  let site: LoadedSite;
  let kveik: KveikPosts;

  const post = (payload: unknown) =>
    app.inject({ method: 'POST', url: '/api/ai.php', payload: payload as object });
  const postForm = (fields: Record<string, string | string[]>) => {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const value of [v].flat()) form.append(k, value);
    return app.inject({
      method: 'POST',
      url: '/api/ai.php',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.toString(),
    });
  };
  const setEnabled = (on: boolean) => settingsRepository(runtime.database.db).set('ai_enabled', on);
  const existingSlugs = async () =>
    new Set((await runtime.database.query<{ slug: string }>(sql`SELECT slug FROM tags`)).map((r) => r.slug));

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', PUBLIC_URL: 'https://beer.example' });
    site = await loadBeerDump(runtime.database.db);
    kveik = await insertKveikPosts(runtime.database.db);
    app = await buildQaApp(runtime);
    pool = await startWorkerPool(runtime, ['ai']);
    await runtime.queues.enqueueAndWait('ai', 'rebuild-tag-index', {}, 60_000);
  }, 120_000);

  afterAll(async () => {
    await pool?.close(5000);
    await app?.close();
    await runtime?.close();
  });

  it('is documented in the OpenAPI document, JSON and form-encoded', async () => {
    const res = await app.inject('/api/openapi.json');
    expect(res.statusCode).toBe(200);
    const operation = res.json().paths['/api/ai.php']?.post;
    expect(Object.keys(operation.requestBody.content).sort()).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '4XX', '5XX']));
  });

  describe('while AI is disabled (the default)', () => {
    it('answers 403 with the error body to a valid request', async () => {
      const res = await post({ action: 'spam_check', content: 'Is this spam?' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: true, code: 403, message: expect.stringMatching(/disabled/) });
    });

    it('answers 403 before validating: the feature does not exist for callers', async () => {
      for (const payload of [{ action: 'bogus' }, {}, { action: 'chat', content: '' }]) {
        const res = await post(payload);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ error: true, code: 403 });
      }
      expect((await postForm({ action: 'spam_check', content: 'hello' })).statusCode).toBe(403);
    });
  });

  describe('toggled by the setting', () => {
    it('works as soon as ai_enabled is set, and stops as soon as it is cleared', async () => {
      await setEnabled(true);
      expect((await post({ action: 'spam_check', content: 'A question about hops' })).statusCode).toBe(200);
      await setEnabled(false);
      expect((await post({ action: 'spam_check', content: 'A question about hops' })).statusCode).toBe(403);
      await setEnabled(true);
      expect((await post({ action: 'spam_check', content: 'A question about hops' })).statusCode).toBe(200);
    });
  });

  describe('with AI enabled', () => {
    beforeAll(() => setEnabled(true));

    it('spam_check flags spam and passes an ordinary question, confidence in [0, 1]', async () => {
      const spam = await post({ action: 'spam_check', content: SPAM });
      expect(spam.statusCode).toBe(200);
      expect(spam.json()).toEqual({ success: true, is_spam: true, confidence: expect.any(Number) });
      const ham = await post({ action: 'spam_check', content: STORAGE_QUESTION });
      expect(ham.json()).toEqual({ success: true, is_spam: false, confidence: expect.any(Number) });
      for (const res of [spam, ham]) {
        const { confidence } = res.json();
        expect(confidence).toBeGreaterThanOrEqual(0);
        expect(confidence).toBeLessThanOrEqual(1);
      }
    });

    it('quality_check scores 0-100 and names what is wrong', async () => {
      const res = await post({
        action: 'quality_check',
        content: 'HELP!!! MY HOMEBREW BEER TASTES REALLY BAD',
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['issues', 'score', 'success']);
      expect(Number.isInteger(body.score)).toBe(true);
      expect(body.score).toBeGreaterThanOrEqual(0);
      expect(body.score).toBeLessThan(100);
      const codes = body.issues.map((i: { code: string }) => i.code);
      expect(codes).toEqual(
        expect.arrayContaining(['too_short', 'excessive_punctuation', 'all_caps', 'missing_question_mark']),
      );
      for (const issue of body.issues)
        expect(issue).toEqual({ code: expect.any(String), message: expect.any(String) });
    });

    it('quality_check with a title finds an existing question with the same title (PostgreSQL lookup)', async () => {
      const res = await post({
        action: 'quality_check',
        title: kveik.temperatureTitle,
        content:
          'I have a fresh pack of kveik and a farmhouse recipe. Which fermentation temperature gives the best flavour?',
      });
      expect(res.statusCode).toBe(200);
      const duplicate = res.json().issues.find((i: { code: string }) => i.code === 'possible_duplicate');
      expect(duplicate?.message).toContain(`#${kveik.temperatureQuestion}`);
    });

    it('quality_check without a title does not report a duplicate for new content', async () => {
      const res = await post({
        action: 'quality_check',
        content:
          'Does the shape of a tulip glass change how the aroma of a Belgian tripel reaches the nose? I read that it concentrates it.',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().issues.map((i: { code: string }) => i.code)).not.toContain('possible_duplicate');
    });

    it('suggest_tags suggests existing tags only, drawn from the rebuilt index', async () => {
      const res = await post({ action: 'suggest_tags', content: STORAGE_QUESTION });
      expect(res.statusCode).toBe(200);
      const { tags } = res.json();
      expect(tags.length).toBeGreaterThan(0);
      expect(tags.length).toBeLessThanOrEqual(5);
      const slugs = await existingSlugs();
      for (const tag of tags) {
        expect(tag).toEqual({
          name: expect.any(String),
          slug: expect.any(String),
          score: expect.any(Number),
        });
        expect(slugs.has(tag.slug)).toBe(true);
        expect(site.tagSlugs.has(tag.slug) || ['kveik', 'yeast', 'fermentation'].includes(tag.slug)).toBe(
          true,
        );
      }
      expect(tags.map((t: { slug: string }) => t.slug)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^(storage|aging|stout)$/)]),
      );
    });

    it('suggest_tags honours limit', async () => {
      const res = await post({ action: 'suggest_tags', content: STORAGE_QUESTION, limit: 1 });
      expect(res.statusCode).toBe(200);
      expect(res.json().tags).toHaveLength(1);
    });

    it('suggest_tags learns a new tag only when the rebuild job has run', async () => {
      // Koji appears in no tag of the beer dump: the index built in beforeAll cannot know it.
      const author = await createAuthor(runtime.database.db, 'koji-brewer');
      const koji = [
        [
          'How do I grow koji on steamed rice?',
          'I want to grow koji mold on steamed rice to convert its starch for a rice beer. What temperature and humidity?',
        ],
        [
          'Can koji replace malt in a beer?',
          'Koji mold makes enzymes that turn rice starch into sugar. Can koji rice replace malted barley?',
        ],
        [
          'Where do I buy koji spores?',
          'Where can a homebrewer buy koji spores to inoculate rice for brewing?',
        ],
      ];
      for (const [title, content] of koji)
        await insertQuestion(runtime.database.db, author, {
          title: title!,
          content: content!,
          tags: ['koji'],
        });
      const ask = async () =>
        (
          await post({
            action: 'suggest_tags',
            content: 'How long should koji mold grow on the rice before I mash it with water?',
          })
        ).json().tags as { slug: string }[];

      expect((await ask()).map((t) => t.slug)).not.toContain('koji');
      await runtime.queues.enqueueAndWait('ai', 'rebuild-tag-index', {}, 60_000);
      expect((await ask()).map((t) => t.slug)).toContain('koji');
    });

    it('suggest_tags never suggests a tag deleted since the index was built', async () => {
      const before = (await post({ action: 'suggest_tags', content: STORAGE_QUESTION })).json().tags as {
        slug: string;
      }[];
      const gone = before[0]!.slug;
      await deleteTag(runtime.database.db, gone);
      const after = (await post({ action: 'suggest_tags', content: STORAGE_QUESTION })).json().tags as {
        slug: string;
      }[];
      expect(after.map((t) => t.slug)).not.toContain(gone);
      const slugs = await existingSlugs();
      for (const t of after) expect(slugs.has(t.slug)).toBe(true);
    });

    it("chat answers from the site's own posts and cites them", async () => {
      const res = await post({
        action: 'chat',
        content: 'At what temperature does kveik yeast ferment best?',
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.success).toBe(true);
      expect(body.generated_by).toBe('local');
      expect(body.reply).toMatch(/kveik/i);
      expect(body.reply).toContain('[1]');
      expect(body.sources.length).toBeGreaterThan(0);
      const cited = body.sources.find(
        (s: { type: string; id: number }) => s.type === 'answer' && s.id === kveik.acceptedAnswer,
      );
      expect(cited).toEqual({
        type: 'answer',
        id: kveik.acceptedAnswer,
        question_id: kveik.temperatureQuestion,
        title: kveik.temperatureTitle,
        url: `https://beer.example/api/questions/${kveik.temperatureQuestion}/answers#answer-${kveik.acceptedAnswer}`,
        score: expect.any(Number),
      });
      const kveikIds = new Set([
        kveik.acceptedAnswer,
        kveik.otherAnswer,
        kveik.dryingAnswer,
        kveik.temperatureQuestion,
        kveik.dryingQuestion,
      ]);
      for (const source of body.sources) expect(kveikIds.has(source.id)).toBe(true);
    });

    it('chat says so when the site has nothing on the subject', async () => {
      const res = await post({ action: 'chat', content: 'lattice quantum chromodynamics and gluons' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        success: true,
        sources: [],
        reply: expect.stringMatching(/could not find/),
      });
    });

    it('accepts a form-encoded body', async () => {
      const spam = await postForm({ action: 'spam_check', content: SPAM });
      expect(spam.statusCode).toBe(200);
      expect(spam.json()).toMatchObject({ success: true, is_spam: true });
      const tags = await postForm({ action: 'suggest_tags', content: STORAGE_QUESTION, limit: '2' });
      expect(tags.statusCode).toBe(200);
      expect(tags.json().tags.length).toBeLessThanOrEqual(2);
      const quality = await postForm({
        action: 'quality_check',
        title: 'Kveik temperature',
        content: 'Which temperature for kveik?',
      });
      expect(quality.json()).toMatchObject({ success: true, score: expect.any(Number) });
    });

    it('accepts content of exactly the maximum length', async () => {
      const res = await post({ action: 'spam_check', content: 'hops '.repeat(AI_MAX_CONTENT_LENGTH / 5) });
      expect(res.statusCode).toBe(200);
    });

    const badBodies: [string, unknown, RegExp][] = [
      ['no action', { content: 'x' }, /action is required/],
      ['an unknown action', { action: 'translate', content: 'x' }, /Unknown action "translate"/],
      ['a non-string action', { action: 5, content: 'x' }, /Unknown action 5/],
      ['no content', { action: 'spam_check' }, /content is required/],
      ['empty content', { action: 'spam_check', content: '' }, /must not be empty/],
      ['blank content', { action: 'chat', content: '  \n\t ' }, /must not be empty/],
      [
        'content too long',
        { action: 'spam_check', content: 'a'.repeat(AI_MAX_CONTENT_LENGTH + 1) },
        /at most 20000/,
      ],
      ['numeric content', { action: 'spam_check', content: 123 }, /content must be a string/],
      ['array content', { action: 'spam_check', content: ['a', 'b'] }, /content must be a string/],
      ['object content', { action: 'spam_check', content: { text: 'a' } }, /content must be a string/],
      ['a numeric title', { action: 'quality_check', content: 'x', title: 5 }, /title must be a string/],
      [
        'a title too long',
        { action: 'quality_check', content: 'x', title: 't'.repeat(301) },
        /title must be at most 300 characters \(got 301\)/,
      ],
      ['limit 0', { action: 'suggest_tags', content: 'x', limit: 0 }, /limit must be/],
      ['limit 21', { action: 'suggest_tags', content: 'x', limit: 21 }, /limit must be/],
      ['a fractional limit', { action: 'suggest_tags', content: 'x', limit: 2.5 }, /limit must be/],
      ['a word as limit', { action: 'suggest_tags', content: 'x', limit: 'many' }, /limit must be/],
      ['a JSON array', ['spam_check', 'x'], /JSON object or a form/],
    ];
    it.each(badBodies)('400 for %s', async (_name, payload, message) => {
      const res = await post(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, code: 400, message: expect.stringMatching(message) });
    });

    it('400 for malformed JSON and for a repeated form field', async () => {
      const malformed = await app.inject({
        method: 'POST',
        url: '/api/ai.php',
        headers: { 'content-type': 'application/json' },
        payload: '{"action": "spam_check", "content": ',
      });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toMatchObject({ error: true, code: 400 });
      const repeated = await postForm({ action: 'spam_check', content: ['one', 'two'] });
      expect(repeated.statusCode).toBe(400);
      expect(repeated.json()).toEqual({ error: true, code: 400, message: 'content must be a string' });
    });

    it('400 for a request without a body', async () => {
      const res = await app.inject({ method: 'POST', url: '/api/ai.php' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 400 });
    });
  });
});
