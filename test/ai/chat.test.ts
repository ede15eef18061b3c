import { beforeAll, describe, expect, it } from 'vitest';
import { chat, type Retrieve } from '../../shared/ai/index.js';
import { overlapRetrieve, readBeerPosts, type BeerPost } from './support/beer-dump.js';

let posts: BeerPost[];
let retrieve: Retrieve;

beforeAll(async () => {
  posts = await readBeerPosts();
  retrieve = overlapRetrieve(posts);
});

describe('chat with the local composer over the beer dump', () => {
  it('answers from the site, citing what it quotes', async () => {
    const result = await chat('What are citra hops?', {
      retrieve,
      sourceUrl: (q, a) => `/questions/${q}${a ? `#answer-${a}` : ''}`,
    });
    expect(result.generatedBy).toBe('local');
    expect(result.sources.length).toBeGreaterThan(0);
    expect(result.sources.length).toBeLessThanOrEqual(3);
    expect(result.reply).toMatch(/citra/i);
    // Every source is cited in the reply, in order, and every citation has a source.
    result.sources.forEach((_s, i) => expect(result.reply).toContain(`[${i + 1}]`));
    expect(result.reply).not.toContain(`[${result.sources.length + 1}]`);
    expect(result.sources[0]).toMatchObject({ score: 1 });
    for (const source of result.sources) {
      expect(['question', 'answer']).toContain(source.type);
      expect(source.url).toMatch(/^\/questions\/\d+/);
      expect(source.score).toBeGreaterThan(0);
      expect(source.score).toBeLessThanOrEqual(1);
    }
  });

  it('quotes sentences that really are in the cited posts', async () => {
    const result = await chat('How is low alcohol beer made?', { retrieve });
    const firstLine = result.reply.split('\n').find((line) => line.endsWith('[1]')) ?? '';
    const quoted = firstLine.replace(/^- [^:]+: /, '').replace(/ \[1\]$/, '');
    const source = result.sources[0];
    expect(source).toBeDefined();
    const post = posts.find((p) => p.id === source?.id);
    expect(post?.text.replace(/\s+/g, ' ')).toContain(quoted.split(' ').slice(0, 6).join(' '));
  });

  it('prefers the accepted answer when it is relevant', async () => {
    const result = await chat('What is a citra hop and how does it differ from other hops?', { retrieve });
    expect(result.reply).toContain('The accepted answer to');
  });

  it('says honestly when the site has nothing on the topic', async () => {
    const result = await chat('How do I replace the clutch on a 1998 Volkswagen Golf?', { retrieve });
    expect(result).toEqual({
      reply:
        'I could not find anything on this site about “How do I replace the clutch on a 1998 Volkswagen Golf?”. You could ask it as a new question.',
      sources: [],
      generatedBy: 'local',
    });
  });

  it('lets a retrieval failure propagate so the job is retried', async () => {
    const broken: Retrieve = async () => {
      throw new Error('connection refused');
    };
    await expect(chat('What are citra hops?', { retrieve: broken })).rejects.toThrow('connection refused');
  });
});
