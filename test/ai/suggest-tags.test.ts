import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildTagIndex,
  loadTagIndex,
  readStackExchangeQuestions,
  serializeTagIndex,
  suggestTags,
  type TagIndex,
} from '../../shared/ai/index.js';
import { parseTagList, type StackExchangeQuestion } from '../../shared/ai/tags/stackexchange-posts.js';
import { BEER_POSTS } from './support/beer-dump.js';

let questions: StackExchangeQuestion[];
let index: TagIndex;

beforeAll(async () => {
  questions = [];
  for await (const q of readStackExchangeQuestions(BEER_POSTS)) questions.push(q);
  // Built from an async iterable, the way a worker would stream rows from PostgreSQL.
  index = await buildTagIndex(readStackExchangeQuestions(BEER_POSTS));
});

describe('tag index over the beer.stackexchange.com dump', () => {
  it('reads every question with its tags', () => {
    expect(questions).toHaveLength(244);
    expect(questions[0]).toMatchObject({
      id: 1,
      title: 'What is a citra hop, and how does it differ from other hops?',
      tags: ['hops'],
    });
    expect(parseTagList('<ale><ipa>')).toEqual(['ale', 'ipa']);
    expect(parseTagList('|ale|ipa|')).toEqual(['ale', 'ipa']);
  });

  it('suggests the right tags for new posts about hops and about history', () => {
    const hops = suggestTags(
      index,
      'Which hop varieties give a citrus aroma, and when should I add them to get it? Cascade or citra?',
    );
    expect(hops.map((t) => t.slug)).toContain('hops');
    const history = suggestTags(
      index,
      'When did monks start brewing beer in Belgian abbeys, and why did they stop?',
    );
    expect(history.slice(0, 3).map((t) => t.slug)).toContain('history');
  });

  it('only ever suggests existing tags, best first, with scores in [0, 1]', () => {
    const known = new Set(questions.flatMap((q) => q.tags));
    const tags = suggestTags(index, 'Is it OK to store lager bottles on their side in a warm cellar?', 5);
    expect(tags.length).toBeGreaterThan(0);
    expect(tags.length).toBeLessThanOrEqual(5);
    for (const tag of tags) {
      expect(known.has(tag.slug)).toBe(true);
      expect(tag.score).toBeGreaterThan(0);
      expect(tag.score).toBeLessThanOrEqual(1);
    }
    const scores = tags.map((t) => t.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('round-trips through JSON with identical suggestions', () => {
    const reloaded = loadTagIndex(serializeTagIndex(index));
    const text = 'What glass should I use for a Belgian tripel, and at what temperature should it be served?';
    expect(reloaded.size).toBe(index.size);
    expect(suggestTags(reloaded, text)).toEqual(suggestTags(index, text));
  });

  it('honours the limit and returns nothing without an index or without words', async () => {
    expect(suggestTags(index, 'How are stouts and porters different in taste and brewing?', 2)).toHaveLength(
      2,
    );
    expect(suggestTags(null, 'stout')).toEqual([]);
    expect(suggestTags(await buildTagIndex([]), 'stout')).toEqual([]);
    expect(suggestTags(index, '!!! ???')).toEqual([]);
  });

  it('accepts explicit {name, slug} tags', async () => {
    const small = await buildTagIndex([
      {
        id: 1,
        title: 'Best stout for winter',
        body: 'Looking for a rich imperial stout.',
        tags: [{ name: 'Stout', slug: 'stout' }],
      },
      {
        id: 2,
        title: 'Lager fermentation temperature',
        body: 'How cold should a lager ferment?',
        tags: ['Lager Beer'],
      },
    ]);
    expect(suggestTags(small, 'Which imperial stout is good in winter?')[0]).toMatchObject({
      name: 'Stout',
      slug: 'stout',
    });
    expect(small.tags.map((t) => t.slug)).toEqual(['stout', 'lager-beer']);
  });
});
