import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import stem from 'wink-porter2-stemmer';
import { excerptOf } from '../../shared/qa/excerpt.js';
import { withAdmin } from '../support/postgres.js';

const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${from + i}`).join(' ');

describe('search excerpts', () => {
  it('marks every inflection of the matched lexemes, and nothing else', () => {
    const excerpt = excerptOf(
      'The temperatures rose; a temperature of 20 is tempting. Happiness is a happy yeast.',
      ['temperatur', 'happi'],
    );
    expect(excerpt).toBe(
      'The <mark>temperatures</mark> rose; a <mark>temperature</mark> of 20 is tempting. ' +
        '<mark>Happiness</mark> is a <mark>happy</mark> yeast.',
    );
  });

  it('cuts up to two fragments of 35 words, each led by a few words before its first match', () => {
    const text = `${words(50)} hops ${words(100, 50)} hops again ${words(100, 150)}`;
    const [first, second, ...rest] = excerptOf(text, ['hop']).split(' ... ');
    expect(rest).toEqual([]);
    expect(first).toBe(`${words(6, 44)} <mark>hops</mark> ${words(28, 50)}`);
    expect(second).toBe(`${words(6, 144)} <mark>hops</mark> again ${words(27, 150)}`);
  });

  it('begins at the start when nothing in the text matched (the match was in the title or tags)', () => {
    expect(excerptOf(`${words(40)}.`, ['stout'])).toBe(words(35));
    expect(excerptOf('(short text).', ['stout'])).toBe('(short text).');
  });

  it('decodes every entity of the stored text, then escapes, so only the marks are markup', () => {
    expect(excerptOf('Mash at 67&deg;C &mdash; hops &amp; malt &lt;b&gt; "quoted" it&#39;s', ['hop'])).toBe(
      'Mash at 67°C — <mark>hops</mark> &amp; malt &lt;b&gt; &quot;quoted&quot; it&#39;s',
    );
    expect(excerptOf('&lt;mark&gt;x&lt;/mark&gt; <script>', ['x'])).toBe(
      '&lt;mark&gt;<mark>x</mark>&lt;/mark&gt; &lt;script&gt;',
    );
    expect(excerptOf('', ['x'])).toBe('');
  });

  it("stems words as PostgreSQL's english configuration does, over the bundled dump's vocabulary", async () => {
    const posts = readFileSync(new URL('../../data/stackexchange-beer/Posts.xml', import.meta.url), 'utf8');
    const vocabulary = [...new Set(posts.toLowerCase().match(/\b[a-z]{3,}\b/g))].slice(0, 3000);
    expect(vocabulary.length).toBe(3000);
    const lexemes = await withAdmin(
      (sql) => sql<{ word: string; lexemes: string[] }[]>`
        SELECT w AS word, tsvector_to_array(to_tsvector('english', w)) AS lexemes
        FROM unnest(${vocabulary}::text[]) AS w`,
    );
    // Stop words have no lexeme; every other word has exactly one, which must be our stem of it.
    const compared = lexemes.filter((row) => row.lexemes.length === 1);
    expect(compared.length).toBeGreaterThan(2500);
    const differing = compared.filter((row) => stem(row.word) !== row.lexemes[0]);
    expect(differing).toEqual([]);
  });
});
