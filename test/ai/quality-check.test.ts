import { describe, expect, it } from 'vitest';
import {
  analyzeQuality,
  qualityCheck,
  QUALITY_RULES,
  splitTitle,
  type SimilarQuestion,
} from '../../shared/ai/index.js';
import { countSyllables } from '../../shared/ai/quality/readability.js';

const none = async (): Promise<SimilarQuestion[]> => [];
const codes = (issues: Array<{ code: string }>): string[] => issues.map((i) => i.code);

const GOOD_BODY =
  'What is the best temperature to serve a Belgian tripel? Straight from the fridge it tastes flat, ' +
  'but at room temperature it seems too boozy. Is there a rule of thumb for strong ales, and does the glass matter?';

describe('quality_check', () => {
  it('gives a clear, well-formed question a full score', async () => {
    const result = await qualityCheck(GOOD_BODY, 'Serving temperature for a Belgian tripel', {
      findSimilarQuestions: none,
    });
    expect(result).toEqual({ score: 100, issues: [] });
  });

  it('reads "title, blank line, body" as a title when no title is given', () => {
    expect(splitTitle(`Serving temperature for a tripel?\n\n${GOOD_BODY}`)).toEqual({
      title: 'Serving temperature for a tripel?',
      body: GOOD_BODY,
    });
    expect(splitTitle(GOOD_BODY).title).toBeNull();
  });

  it('penalises a short shouted post with no question', async () => {
    const result = await qualityCheck('MY BEER IS FLAT AND I HATE IT, FIX IT NOW!!!', 'HELP', {
      findSimilarQuestions: none,
    });
    expect(codes(result.issues)).toEqual(
      expect.arrayContaining([
        'too_short',
        'title_too_short',
        'missing_question_mark',
        'all_caps',
        'excessive_punctuation',
      ]),
    );
    expect(result.score).toBe(100 - 30 - 10 - 10 - 25 - 5);
    expect(Number.isInteger(result.score)).toBe(true);
  });

  it('finds code pasted outside a code block, and accepts it fenced', async () => {
    const pasted = [
      'My priming sugar calculator prints the wrong amount for a five gallon batch of stout. What is wrong?',
      'const sugar = volume * 4;',
      'if (co2 > 2.5) { sugar = sugar / 2; }',
      'console.log(sugar);',
    ].join('\n');
    const bad = await qualityCheck(pasted, 'Priming sugar calculator gives the wrong amount', {
      findSimilarQuestions: none,
    });
    expect(codes(bad.issues)).toContain('unformatted_code');

    const fenced = pasted.replace('\nconst', '\n```\nconst') + '\n```';
    const good = await qualityCheck(fenced, 'Priming sugar calculator gives the wrong amount', {
      findSimilarQuestions: none,
    });
    expect(codes(good.issues)).not.toContain('unformatted_code');
  });

  it('notices a title that has nothing to do with the body', async () => {
    const body =
      'I brewed a stout last week and the fermentation stopped after two days. The gravity is stuck at 1.030 ' +
      'and the airlock is quiet. I pitched one packet of dry yeast at twenty degrees. Should I repitch or wait?';
    const result = await qualityCheck(body, 'Choosing guitar strings for beginners', {
      findSimilarQuestions: none,
    });
    expect(codes(result.issues)).toContain('title_body_mismatch');
  });

  it('flags hard-to-read prose', async () => {
    const dense =
      'Notwithstanding considerable experimentation regarding fermentation temperature optimisation, ' +
      'characteristically undesirable phenolic characteristics unavoidably materialised, consequently ' +
      'necessitating comprehensive reconsideration of methodological considerations surrounding ' +
      'yeast propagation, oxygenation, temperature regulation and sanitisation procedures, particularly ' +
      'considering the comparatively unsophisticated equipment available. Recommendations?';
    const result = await analyzeQuality(dense, 'Phenolic off-flavours despite temperature control', {
      findSimilarQuestions: none,
    });
    expect(result.readability.fleschReadingEase).toBeLessThan(30);
    expect(codes(result.issues)).toContain('hard_to_read');
  });

  it('reports a likely duplicate from the injected similarity search', async () => {
    const seen: string[] = [];
    const findSimilarQuestions = async (text: string): Promise<SimilarQuestion[]> => {
      seen.push(text);
      return [
        { id: 12, title: 'How cold should a tripel be served?', similarity: 0.82 },
        { id: 40, title: 'Glassware for Belgian ales', similarity: 0.31 },
      ];
    };
    const result = await qualityCheck(GOOD_BODY, 'Serving temperature for a Belgian tripel', {
      findSimilarQuestions,
    });
    expect(seen).toEqual(['Serving temperature for a Belgian tripel']);
    expect(result.issues).toEqual([
      {
        code: 'possible_duplicate',
        message: 'A similar question already exists: #12 "How cold should a tripel be served?".',
      },
    ]);
    expect(result.score).toBe(100 - QUALITY_RULES.possible_duplicate.weight);
  });

  it('goes on without the duplicate rule when the lookup fails', async () => {
    const errors: unknown[] = [];
    const result = await qualityCheck(GOOD_BODY, 'Serving temperature for a Belgian tripel', {
      findSimilarQuestions: async () => {
        throw new Error('database unavailable');
      },
      onLookupError: (error) => errors.push(error),
    });
    expect(result.score).toBe(100);
    expect(errors).toHaveLength(1);
  });

  it('scores empty content 0', async () => {
    expect(await qualityCheck('   ', undefined, { findSimilarQuestions: none })).toEqual({
      score: 0,
      issues: [{ code: 'empty', message: QUALITY_RULES.empty.message }],
    });
  });

  it('counts syllables well enough for Flesch', () => {
    expect([
      countSyllables('beer'),
      countSyllables('brewing'),
      countSyllables('fermentation'),
      countSyllables('bottle'),
    ]).toEqual([1, 2, 4, 2]);
  });
});
