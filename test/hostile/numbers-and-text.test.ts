import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INT4 } from '../../shared/db/int4.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { questionBody, writeWorld, type Writer } from '../qa-write/helpers.js';
import { expectErrorBody } from './support.js';

// Classes 1, 2, 4 and 5 of issue 16: numbers out of range, NUL and lone surrogates, JSON bodies taken as sent,
// and messages that quote at most a short prefix of the input.

const HUGE_NUMBERS = ['9'.repeat(500), '9'.repeat(10_000), '1e309', '-1e309', 'Infinity', '-Infinity', 'NaN'];

describe('hostile numbers, text and types', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let writer: Writer;

  beforeAll(async () => {
    world = await writeWorld();
    writer = await world.writer('hostile');
  });
  afterAll(() => world.close());

  const post = (url: string, payload: unknown, method: 'POST' | 'PATCH' = 'POST') =>
    world.app.inject({
      method,
      url,
      headers: { ...writer.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });

  it.each(['/api/questions', '/api/users', '/api/tags', '/api/search?q=beer'])(
    '%s: page and limit out of range are a 400, never a 500',
    async (route) => {
      const join = route.includes('?') ? '&' : '?';
      for (const param of ['page', 'limit', ...(route === '/api/questions' ? ['category'] : [])]) {
        for (const value of HUGE_NUMBERS) {
          const res = await world.app.inject(`${route}${join}${param}=${encodeURIComponent(value)}`);
          const message = expectErrorBody(res, 400);
          expect(message).toContain(param);
          expect(message.length).toBeLessThan(200);
        }
      }
    },
  );

  it('poll-vote.php: ids out of range, as JSON or a form, are a 400', async () => {
    for (const poll of ['Infinity', 1e300, MAX_INT4 + 1, '1e309', -1, 0, true, null, [1], { id: 1 }]) {
      expectErrorBody(await post('/api/poll-vote.php', { poll_id: poll, option_id: 1 }), 400);
    }
    for (const poll of ['Infinity', '1e309', '9'.repeat(500), String(MAX_INT4 + 1), '-1', '1.5']) {
      const res = await world.app.inject({
        method: 'POST',
        url: '/api/poll-vote.php',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `poll_id=${encodeURIComponent(poll)}&option_id=1`,
      });
      expectErrorBody(res, 400);
    }
  });

  it('a JSON number past the double range (1e309, 400 digits: ±Infinity once parsed) is a 400 naming it', async () => {
    const raw = (url: string, payload: string) =>
      world.app.inject({
        method: 'POST',
        url,
        headers: { ...writer.auth, 'content-type': 'application/json' },
        payload,
      });
    for (const number of ['1e309', '-1e309', '9'.repeat(400)]) {
      const vote = await raw('/api/poll-vote.php', `{"poll_id": 1, "option_id": ${number}}`);
      expect(expectErrorBody(vote, 400)).toBe('option_id is a number out of range (past ±1.8e308)');
      const nested = await raw('/api/questions', `{"title": "t", "tags": [1, ${number}]}`);
      expect(expectErrorBody(nested, 400)).toBe('tags.1 is a number out of range (past ±1.8e308)');
    }
    // Large but finite numbers are the validator's to judge.
    expect(
      expectErrorBody(await raw('/api/poll-vote.php', '{"poll_id": 1e308, "option_id": 1}'), 400),
    ).toMatch(/poll_id/);
  });

  it('a category id past int4 on a write is a 400 naming the field', async () => {
    const message = expectErrorBody(await post('/api/questions', questionBody({ category: 2 ** 40 })), 400);
    expect(message).toMatch(/^category must be <= 2147483647/);
  });

  it.each([
    ['a NUL path id', '/api/questions/%00/answers'],
    ['a NUL inside a slug', '/api/questions/slug%00.json/answers'],
    ['a NUL answer id', '/api/answers/%00/comments'],
  ])('%s is a 400, not a database error', async (_name, url) => {
    const message = expectErrorBody(
      await post(url, { content: 'A perfectly fine answer of some length.' }),
      400,
    );
    expect(message).toMatch(/NUL/);
  });

  it.each([
    ['NUL', 'abc\u0000def', /NUL/],
    ['a lone high surrogate', 'abc\uD800def', /lone surrogate/],
    ['a lone low surrogate', 'abc\uDC00def', /lone surrogate/],
  ])('content with %s is a 400 on every text field of every write', async (_name, bad, pattern) => {
    const text = `This is long enough to be a post ${bad} and more text`;
    const cases: [string, unknown][] = [
      ['/api/questions', questionBody({ content: text })],
      ['/api/questions', questionBody({ title: `A title that has ${bad} inside it` })],
      ['/api/questions', questionBody({ tags: [`hop${bad}`] })],
      ['/api/ai.php', { action: 'spam_check', content: text }],
      ['/api/newsletter-subscribe.php', { email: `a${bad}@example.test`, action: 'subscribe' }],
      ['/api/polls', { title: `Poll ${bad}`, options: ['a', 'b'] }],
    ];
    for (const [url, payload] of cases) {
      const res = await post(url, payload);
      // ai.php is off (403 before the body is read); the others refuse the text itself.
      if (url === '/api/ai.php') expect(res.statusCode).toBe(403);
      else expect(res.json().message, url).toMatch(pattern);
      expect(res.statusCode, url).toBeLessThan(500);
    }
    // Query strings (a lone surrogate cannot be %-encoded in UTF-8: its CESU-8 bytes are sent instead) and
    // field names too.
    expectErrorBody(await world.app.inject(`/api/search?q=a%00b`), 400);
    for (const broken of ['%ED%A0%80', '%C0%80', '%FF', '%E2%82']) {
      expect((await world.app.inject(`/api/search?q=a${broken}b`)).statusCode).toBeLessThan(500);
      expect((await world.app.inject(`/api/questions/a${broken}b/answers`)).statusCode).toBeLessThan(500);
    }
    expect(expectErrorBody(await post('/api/questions', { ...questionBody(), [`x${bad}`]: 1 }), 400)).toMatch(
      /field name/,
    );
  });

  it('keeps well-formed Unicode as sent: astral characters, combining marks, bidi controls', async () => {
    const content = 'Zoë 🍺 e\u0301 \u202Eevil\u202C — fermentation notes that are long enough.';
    const res = await post('/api/questions', questionBody({ content }));
    expect(res.statusCode).toBe(201);
    expect(res.json().data.content).toContain('🍺');
  });

  it('takes JSON bodies as sent: no number becomes a title, no string becomes a tag list', async () => {
    // 2^53 + 1 as JSON text: it must not become the title "9007199254740992".
    const bigTitle = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: { ...writer.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(questionBody({ title: 0 })).replace('"title":0', '"title":9007199254740993'),
    });
    expect(expectErrorBody(bigTitle, 400)).toBe('title must be a string');
    expect(expectErrorBody(await post('/api/questions', questionBody({ tags: 'hops' })), 400)).toBe(
      'tags must be an array',
    );
    expect(expectErrorBody(await post('/api/questions', questionBody({ category: '1' })), 400)).toMatch(
      /category must be null or an integer/,
    );
    expectErrorBody(await post('/api/questions', [questionBody()]), 400);
    expectErrorBody(await post('/api/questions', 'a string'), 400);
    expectErrorBody(await post('/api/questions', null), 400);
  });

  it('refuses __proto__ and constructor.prototype keys', async () => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: { ...writer.auth, 'content-type': 'application/json' },
      payload: `{"__proto__": {"admin": true}, "title": "x"}`,
    });
    expectErrorBody(res, 400);
  });

  it('refuses JSON nested deeper than 32 levels before parsing it, on every route', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    for (const url of ['/api/questions', '/api/newsletter-subscribe.php', '/api/poll-vote.php']) {
      const res = await world.app.inject({
        method: 'POST',
        url,
        headers: { ...writer.auth, 'content-type': 'application/json' },
        payload: `{"action": ${deep}, "frequency": ${deep}, "title": ${deep}}`,
      });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toMatch(/nested deeper than 32/);
    }
    // 32 levels are fine (and then wrong for other reasons).
    const ok = `${'['.repeat(31)}${']'.repeat(31)}`;
    expect((await post('/api/questions', { ...questionBody(), title: JSON.parse(ok) })).json().message).toBe(
      'title must be a string',
    );
  });

  it('ai.php (switched on): deep or long fields are 400s with short messages', async () => {
    await settingsRepository(world.runtime.database.db).set('ai_enabled', true);
    try {
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      const nested = await world.app.inject({
        method: 'POST',
        url: '/api/ai.php',
        headers: { 'content-type': 'application/json' },
        payload: `{"action": ${deep}, "content": "x"}`,
      });
      expect(expectErrorBody(nested, 400)).toMatch(/nested deeper than 32/);
      const long = await post('/api/ai.php', { action: 'y'.repeat(10_000), content: 'x' });
      expect(expectErrorBody(long, 400)).toMatch(/^Unknown action "y{32}…": expected one of spam_check/);
      expect(long.body.length).toBeLessThan(300);
      const numeric = await post('/api/ai.php', { action: 'suggest_tags', content: 'x', limit: 'Infinity' });
      expect(expectErrorBody(numeric, 400)).toBe('limit must be an integer');
    } finally {
      await settingsRepository(world.runtime.database.db).set('ai_enabled', false);
    }
  });

  it('quotes at most a short prefix of the input in a message', async () => {
    const long = 'x'.repeat(10_000);
    const cases: [string, unknown][] = [
      ['/api/newsletter-subscribe.php', { email: 'a@example.test', action: 'subscribe', frequency: long }],
      ['/api/newsletter-subscribe.php', { email: 'a@example.test', action: long }],
      ['/api/questions', { ...questionBody(), [long]: 1 }],
    ];
    for (const [url, payload] of cases) {
      const res = await post(url, payload);
      expect(res.statusCode, url).toBe(400);
      expect(res.body.length, url).toBeLessThan(300);
      expect(res.json().message).toContain('xxxxxxxx…');
    }
    const query = await world.app.inject(`/api/questions?sort=${long}`);
    expect(query.statusCode).toBe(400);
    expect(query.body.length).toBeLessThan(400);
  });
});
