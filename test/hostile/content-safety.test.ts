import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { excerptOf } from '../../shared/qa/excerpt.js';
import { renderComment, renderPost, sanitizePostHtml, textToHtml } from '../../shared/qa/content.js';
import { ANSWER, questionBody, writeWorld, type Writer } from '../qa-write/helpers.js';

// The content contract of issue 16: writes take Markdown; `content` is always safe HTML, the source comes back
// as content_markdown; imported HTML goes through the same allow-list; excerpts decode every entity.

const ATTACKS = [
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '<a href="javascript:alert(1)">x</a>',
  '[click](javascript:alert(1))',
  '<svg onload=alert(1)>',
  '<iframe src="https://evil.test"></iframe>',
  '<p style="background:url(javascript:alert(1))" onclick="alert(1)">x</p>',
];

/** Whether any tag of the HTML is a script-capable element or carries a handler, a style or a javascript: URL. */
const unsafe = (html: string) =>
  (html.match(/<[a-z][^>]*>/gi) ?? []).some((tag) =>
    /^<(script|iframe|svg|object|embed|style)|\son\w+\s*=|style\s*=|javascript:/i.test(tag),
  );

describe('content safety', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let writer: Writer;

  beforeAll(async () => {
    world = await writeWorld();
    writer = await world.writer('author');
  });
  afterAll(() => world.close());

  const send = (method: 'POST' | 'PATCH', url: string, payload: object) =>
    world.app.inject({ method, url, headers: writer.auth, payload });

  it('renders Markdown to sanitised HTML and strips every attack', () => {
    expect(renderPost('Use **Cascade** and `dry hop`.').html).toBe(
      '<p>Use <strong>Cascade</strong> and <code>dry hop</code>.</p>',
    );
    for (const attack of ATTACKS) {
      expect(unsafe(renderPost(attack).html), attack).toBe(false);
      expect(unsafe(renderComment(attack).html), attack).toBe(false);
      expect(unsafe(sanitizePostHtml(attack)), attack).toBe(false);
    }
    expect(renderPost('[site](https://example.test)').html).toBe(
      '<p><a href="https://example.test" rel="nofollow noopener">site</a></p>',
    );
    expect(textToHtml('1 < 2 & <b>bold</b>')).toBe('1 &lt; 2 &amp; bold');
  });

  it('stores a question, answer and comment as safe HTML with their Markdown source', async () => {
    const markdown = `${ATTACKS.join('\n\n')}\n\nA **real** question about fermentation temperatures.`;
    const asked = await send('POST', '/api/questions', questionBody({ content: markdown }));
    expect(asked.statusCode).toBe(201);
    const question = asked.json().data;
    expect(unsafe(question.content)).toBe(false);
    expect(question.content).toContain('<strong>real</strong>');
    expect(question.content_markdown).toBe(markdown);

    const answered = await send('POST', `/api/questions/${question.id}/answers`, {
      content: `${ANSWER} <img src=x onerror=alert(1)>`,
    });
    expect(answered.statusCode).toBe(201);
    expect(unsafe(answered.json().data.content)).toBe(false);
    expect(answered.json().data.content_markdown).toBe(`${ANSWER} <img src=x onerror=alert(1)>`);

    const commented = await send('POST', `/api/questions/${question.id}/comments`, {
      content: 'Try *this*: <script>alert(1)</script> ok',
    });
    expect(commented.statusCode).toBe(201);
    expect(commented.json().data.content).toBe('Try <em>this</em>:  ok');

    const read = (await world.app.inject(`/api/questions/${question.id}?include=answers,comments`)).json()
      .data;
    // content_markdown is the source as sent (text for an editor, never HTML); every content is safe.
    const contents = [read, ...read.answers, ...read.comments].map((p: { content: string }) => p.content);
    expect(contents).toHaveLength(3);
    for (const html of contents) expect(unsafe(html), html).toBe(false);
    expect(read.content_markdown).toBe(markdown);

    const edited = await send('PATCH', `/api/questions/${question.id}`, {
      content: 'Now with <img src=x onerror=alert(1)> and _emphasis_ and enough text to pass.',
    });
    expect(edited.statusCode).toBe(200);
    expect(unsafe(edited.json().data.content)).toBe(false);
    expect(edited.json().data.content).toContain('<em>emphasis</em>');
  });

  it('decodes every entity in search excerpts, then escapes', () => {
    expect(excerptOf('Mash at 67&deg;C &mdash; hops &amp; malt &lt;b&gt;', ['hop'], 'hops')).toBe(
      'Mash at 67°C — <mark>hops</mark> &amp; malt &lt;b&gt;',
    );
  });
});
