import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import stem from 'wink-porter2-stemmer';
import { excerptOf, matcher, type Matcher } from '../../shared/qa/excerpt.js';
import { withAdmin } from '../support/postgres.js';

const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${from + i}`).join(' ');

/** PostgreSQL's lexemes of a search text, as the search statement sends them. */
const lexemesOf = (query: string): Promise<string[]> =>
  withAdmin(async (sql) => {
    const [row] = await sql<{ lexemes: string[] }[]>`
      SELECT tsvector_to_array(to_tsvector('english', ${query})) AS lexemes`;
    return row!.lexemes;
  });

/** The excerpt of a text for a search, with PostgreSQL's lexemes of it. */
const excerpt = async (text: string, query: string) => excerptOf(text, await lexemesOf(query), query);

describe('search excerpts', () => {
  it('marks every inflection of the matched lexemes, and nothing else', async () => {
    expect(
      await excerpt(
        'The temperatures rose; a temperature of 20 is tempting. Happiness is a happy yeast.',
        'temperature happy',
      ),
    ).toBe(
      'The <mark>temperatures</mark> rose; a <mark>temperature</mark> of 20 is tempting. ' +
        '<mark>Happiness</mark> is a <mark>happy</mark> yeast.',
    );
  });

  it('never marks a stop word, though its stem is a lexeme of the query', async () => {
    expect(await excerpt('Canned beer can be good; I can it.', 'canned')).toBe(
      '<mark>Canned</mark> beer can be good; I can it.',
    );
    expect(await excerpt('I owned my own kettle.', 'owned')).toBe('I <mark>owned</mark> my own kettle.');
    expect(await excerpt("Don't rush it.", 'rush')).toBe('Don&#39;t <mark>rush</mark> it.');
  });

  it('marks what PostgreSQL keeps whole (decimals, hosts, hyphenated words) and words with digits as they are', async () => {
    expect(await excerpt('Gravity at 1.030 and falling, said node.js.', 'gravity 1.030 node.js')).toBe(
      '<mark>Gravity</mark> at <mark>1.030</mark> and falling, said <mark>node.js</mark>.',
    );
    expect(await excerpt('A co-op brewery; dry-hopping at the co-op.', 'hopping')).toBe(
      'A co-op brewery; dry-<mark>hopping</mark> at the co-op.',
    );
    expect(await excerpt('Mash in the 13th hour, not the 13th', '13th')).toBe(
      'Mash in the <mark>13th</mark> hour, not the <mark>13th</mark>',
    );
  });

  it('marks a word the query contains even where the stems of two PostgreSQL versions differ', () => {
    // PGlite's newer Snowball stems "added" as "add"; Porter2 as PostgreSQL 15 has it gives "ad".
    expect(excerptOf('I added hops; adding more.', ['add'], 'added')).toBe(
      'I <mark>added</mark> hops; adding more.',
    );
  });

  it('cuts up to two fragments of 35 words, each led by a few words before its first match', () => {
    const text = `${words(50)} hops ${words(100, 50)} hops again ${words(100, 150)}`;
    const [first, second, ...rest] = excerptOf(text, ['hop'], 'hops').split(' ... ');
    expect(rest).toEqual([]);
    expect(first).toBe(`${words(6, 44)} <mark>hops</mark> ${words(28, 50)}`);
    expect(second).toBe(`${words(6, 144)} <mark>hops</mark> again ${words(27, 150)}`);
  });

  it('continues a fragment, with no delimiter, where the next would start where it ends', () => {
    const text = `hops ${words(34)} hops ${words(40, 34)}`;
    expect(excerptOf(text, ['hop'], 'hops')).toBe(
      `<mark>hops</mark> ${words(34)} <mark>hops</mark> ${words(34, 34)}`,
    );
  });

  it('begins at the start when nothing in the text matched (the match was in the title or tags)', () => {
    expect(excerptOf(`${words(40)}.`, ['stout'], 'stout')).toBe(words(35));
    expect(excerptOf('(short text).', ['stout'], 'stout')).toBe('(short text).');
  });

  it('decodes every entity of the stored text, then escapes, so only the marks are markup', () => {
    expect(
      excerptOf('Mash at 67&deg;C &mdash; hops &amp; malt &lt;b&gt; "quoted" it&#39;s', ['hop'], 'hops'),
    ).toBe('Mash at 67°C — <mark>hops</mark> &amp; malt &lt;b&gt; &quot;quoted&quot; it&#39;s');
    expect(excerptOf('&lt;mark&gt;x&lt;/mark&gt; <script>', ['x'], 'x')).toBe(
      '&lt;mark&gt;<mark>x</mark>&lt;/mark&gt; &lt;script&gt;',
    );
    expect(excerptOf('a&#1;b\u0007c&#x7f;', ['b'], 'b')).toBe('a <mark>b</mark> c');
    expect(excerptOf('', ['x'], 'x')).toBe('');
  });

  it('keeps a text without words whole in its characters', () => {
    const cut = excerptOf(`${'!'.repeat(199)}😀😀`, ['x'], 'x');
    expect(cut).toBe(`${'!'.repeat(199)}😀`);
  });

  it('compares a word of over 64 letters as it is, without stemming it (stemming costs the square of its length)', () => {
    const long = `${'hop'.repeat(30)}ing`;
    expect(stem(long)).not.toBe(long);
    expect(excerptOf(`${long} and hopping`, [stem(long), 'hop'], 'hops')).toBe(
      `${long} and <mark>hopping</mark>`,
    );
    expect(excerptOf(long, [long], long)).toBe(`<mark>${long}</mark>`);
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

describe('the candidates where a match could begin', () => {
  // Words whose case, openings or characters are where lower-casing and openings could part: a final sigma, a
  // dotted capital I, a "y" read as "i", letters outside the BMP, digits, joiners.
  const vocabulary = [
    'Hops',
    'HOPPING',
    'hop',
    'yeast',
    'Yeasty',
    'dying',
    'die',
    'ΣΑΣ',
    'σας',
    'ΑΣ.Β',
    'İstanbul',
    'istanbul',
    '𝐀bc',
    'a𝐀',
    '𝐀',
    '13th',
    '1.030',
    'node.js',
    'co-op',
    'it’s',
    "it's",
    'Straße',
    'ǅemal',
    'C',
    'c',
    'the',
    'x_y',
    'a@b',
    'Ⅻ',
    'ⅻ',
    'İ',
    'añejo',
    'Añejo',
  ];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pick = () => vocabulary[random(vocabulary.length)]!;
  const separators = [' ', '. ', ', ', '-', '/', '(', ') ', '\n', '"'];
  const candidatesIn = (search: Matcher, text: string) => {
    const next = search.candidates(text);
    const found: number[] = [];
    for (let at = next(0); at !== Infinity; at = next(at + 1)) found.push(at);
    return found;
  };

  it('include the start of every token or part that matches', () => {
    let matched = 0;
    let none = 0;
    for (let round = 0; round < 3000; round++) {
      const queryWords = Array.from({ length: 1 + random(2) }, pick);
      const lexemes = [...new Set(queryWords.map((w) => stem(w.toLowerCase())))];
      const search = matcher(lexemes, queryWords.join(' '));
      const text = Array.from(
        { length: 1 + random(6) },
        () => pick() + separators[random(separators.length)],
      ).join('');
      const pieces = [
        ...text.matchAll(/[\p{L}\p{N}]+(?:[.'’_\-/@][\p{L}\p{N}]+)*/gu),
        ...text.matchAll(/[\p{L}\p{N}]+/gu),
      ];
      const starts = pieces
        .filter((piece) => search.matches(piece[0].toLowerCase()))
        .map((piece) => piece.index);
      const candidates = candidatesIn(search, text);
      if (starts.length > 0) matched++;
      if (candidates.length === 0) none++;
      const missed = starts.filter((at) => !candidates.includes(at));
      expect({ text, queryWords, missed }).toEqual({ text, queryWords, missed: [] });
    }
    // Both outcomes happen: the candidates are neither every position nor untried.
    expect(matched).toBeGreaterThan(300);
    expect(none).toBeGreaterThan(300);
  });

  it('are fewer than the words: a text without one gives its leading words', () => {
    const search = matcher(['stout'], 'stout');
    expect(candidatesIn(search, `${words(40)} ${'x'.repeat(10)}`)).toEqual([]);
    expect(candidatesIn(search, 'a stout, Stouts and stouter; gastouts')).toEqual([2, 9, 20]);
    // A part ends in a final sigma alone, not within its token; a "y" opens what opening() reads as "i"; a dotted
    // capital I lower-cases to two characters, and then every position is one.
    expect(candidatesIn(matcher(['ας'], 'ΑΣ'), 'x ΑΣ.Β y')).toEqual([2]);
    expect(candidatesIn(matcher(['die'], 'dying'), 'a dying die')).toEqual([2, 8]);
    expect(candidatesIn(search, 'İ st')).toEqual([0, 1, 2, 3]);
    expect(excerptOf(`${words(40)} x`, ['stout'], 'stout')).toBe(words(35));
    expect(excerptOf(`${words(40)} Stouts`, ['stout'], 'stout')).toBe(`${words(6, 34)} <mark>Stouts</mark>`);
  });
});
