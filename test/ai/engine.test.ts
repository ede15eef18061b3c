import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AI_MAX_CONTENT_LENGTH,
  buildTagIndex,
  clampText,
  createAiEngine,
  loadSpamModel,
  readStackExchangeQuestions,
  spamCheck,
  type AiEngine,
  type Retrieve,
} from '../../shared/ai/index.js';
import { BEER_POSTS, overlapRetrieve, readBeerPosts } from './support/beer-dump.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from './support/fake-openai-server.js';

let fake: FakeOpenAiServer;
let retrieve: Retrieve;
const warnings: string[] = [];
const logger = { warn: (_obj: Record<string, unknown>, message: string) => void warnings.push(message) };

function engineWithProvider(timeoutMs = 500): AiEngine {
  return createAiEngine({
    retrieve,
    findSimilarQuestions: async () => [],
    provider: { baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-model', timeoutMs },
    sourceUrl: (q, a) => `https://beer.example/questions/${q}${a ? `#${a}` : ''}`,
    logger,
  });
}

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  retrieve = overlapRetrieve(await readBeerPosts());
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.mode = 'ok';
  fake.requests.length = 0;
  warnings.length = 0;
});

describe('the AI engine', () => {
  it('wires every action to the shared models', async () => {
    const engine = createAiEngine({
      retrieve,
      findSimilarQuestions: async () => [{ id: 1, title: 'What is a citra hop?', similarity: 0.9 }],
      tagIndex: await buildTagIndex(readStackExchangeQuestions(BEER_POSTS)),
    });
    expect(engine.spamCheck('BUY CHEAP VIAGRA click here http://pills.example.biz NOW!!!').is_spam).toBe(
      true,
    );
    const quality = await engine.qualityCheck(
      'What is a citra hop? I keep seeing it on labels.',
      'Citra hops',
    );
    expect(quality.issues.map((i) => i.code)).toContain('possible_duplicate');
    expect(
      engine.suggestTags('Which hops give a citrus aroma to an IPA?', 3).tags.map((t) => t.slug),
    ).toContain('hops');
    expect((await engine.chat('What are citra hops?')).generatedBy).toBe('local');
    expect(engine.hasProvider).toBe(false);
  });

  it('uses the committed spam model by default, loaded once', () => {
    const engine = createAiEngine({ retrieve, findSimilarQuestions: async () => [] });
    const text = 'Make money fast from home, limited offer, reply today';
    expect(engine.spamCheck(text)).toEqual(spamCheck(loadSpamModel(), text));
    expect(loadSpamModel()).toBe(loadSpamModel());
  });

  it('answers suggest_tags with no tags until an index is set', async () => {
    const engine = createAiEngine({ retrieve, findSimilarQuestions: async () => [] });
    expect(engine.suggestTags('stout')).toEqual({ tags: [] });
    engine.setTagIndex(
      await buildTagIndex([{ id: 1, title: 'Imperial stout', body: 'Rich and dark.', tags: ['stout'] }]),
    );
    expect(engine.hasTagIndex).toBe(true);
    expect(engine.suggestTags('A dark imperial stout?').tags[0]?.slug).toBe('stout');
  });

  it('works on at most AI_MAX_CONTENT_LENGTH characters', () => {
    const long = `${'How long should a lager be conditioned? '.repeat(AI_MAX_CONTENT_LENGTH / 40)}BUY VIAGRA http://x.biz`;
    expect(clampText(long)).toHaveLength(AI_MAX_CONTENT_LENGTH);
    // The spam tail lies beyond the limit, so only the innocent head is judged.
    const engine = createAiEngine({ retrieve, findSimilarQuestions: async () => [] });
    expect(engine.spamCheck(long)).toEqual(engine.spamCheck(clampText(long)));
  });
});

describe('chat through an OpenAI-compatible provider (local fake server)', () => {
  it('sends the retrieved excerpts and returns the provider reply with the same sources', async () => {
    const result = await engineWithProvider().chat('What are citra hops?');
    expect(result.generatedBy).toBe('provider');
    expect(result.reply).toBe(fake.reply);
    expect(result.sources[0]).toMatchObject({
      type: 'answer',
      id: 4,
      url: 'https://beer.example/questions/1#4',
    });

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request?.headers.authorization).toBe('Bearer test-key');
    expect(request?.body.model).toBe('fake-model');
    const user = request?.body.messages?.find((m) => m.role === 'user')?.content ?? '';
    expect(user).toContain('[1] (accepted answer');
    expect(user).toContain('Question: What are citra hops?');
  });

  it('falls back to the local reply when the provider fails', async () => {
    fake.mode = 'error';
    const result = await engineWithProvider().chat('What are citra hops?');
    expect(result.generatedBy).toBe('local');
    expect(result.reply).toContain('[1]');
    expect(fake.requests).toHaveLength(1); // maxRetries: 0
    expect(warnings).toEqual(['ai: chat provider failed; answered with the local composer']);
  });

  it('falls back to the local reply when the provider does not answer in time', async () => {
    fake.mode = 'hang';
    const result = await engineWithProvider(200).chat('What are citra hops?');
    expect(result.generatedBy).toBe('local');
    expect(result.sources.length).toBeGreaterThan(0);
    expect(warnings).toHaveLength(1);
  });

  it('falls back when the provider sends its response head, then nothing more', async () => {
    fake.mode = 'stall';
    const result = await engineWithProvider(200).chat('What are citra hops?');
    expect(result.generatedBy).toBe('local');
    expect(warnings).toHaveLength(1);
  });

  it('falls back when the provider answers an endless body, reading only a bounded part of it', async () => {
    fake.mode = 'endless';
    // A deadline long enough to take in gigabytes on loopback: the size bound must stop the reading first.
    const result = await engineWithProvider(20_000).chat('What are citra hops?');
    expect(result.generatedBy).toBe('local');
    expect(warnings).toHaveLength(1);
    expect(fake.endlessBytes).toBeLessThan(64 * 1024 * 1024);
  });

  it('falls back when the provider returns an empty reply', async () => {
    fake.mode = 'empty';
    const result = await engineWithProvider().chat('What are citra hops?');
    expect(result.generatedBy).toBe('local');
  });

  it('does not call the provider when the site has nothing on the topic', async () => {
    const result = await engineWithProvider().chat('How do I replace the clutch on a 1998 Volkswagen Golf?');
    expect(result.reply).toMatch(/^I could not find anything on this site about/);
    expect(fake.requests).toHaveLength(0);
  });
});
