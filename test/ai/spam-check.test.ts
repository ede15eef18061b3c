import { describe, expect, it } from 'vitest';
import { analyzeSpam, loadSpamModel, readSpamModelFile, spamCheck } from '../../shared/ai/index.js';
import { SPAM_MODEL_PATH } from '../../shared/ai/spam/model-file.js';
import { statSync } from 'node:fs';

// The committed model, exactly as production loads it.
const model = loadSpamModel();

describe('spam_check with the committed model', () => {
  it('flags an obvious pill advert with a link', () => {
    const verdict = spamCheck(
      model,
      'BUY CHEAP VIAGRA click here http://cheap-pills.example.com/now BEST PRICES!!!',
    );
    expect(verdict.is_spam).toBe(true);
    expect(verdict.confidence).toBeGreaterThan(0.9);
  });

  it('passes a real beer question', () => {
    const verdict = spamCheck(
      model,
      'What is the best temperature to serve a Belgian tripel? Straight from the fridge it tastes flat, ' +
        'but at room temperature it seems too boozy. Is there a rule of thumb for strong ales?',
    );
    expect(verdict.is_spam).toBe(false);
    expect(verdict.confidence).toBeGreaterThan(0.9);
  });

  it('passes a brewing answer that links one reference', () => {
    const verdict = spamCheck(
      model,
      'Dry hopping adds aroma without much bitterness, because the alpha acids are not isomerised at ' +
        'fermentation temperature. I usually add the hops after primary fermentation has slowed down and ' +
        'leave them for three to five days. Palmer explains it well in How to Brew: http://howtobrew.com/',
    );
    expect(verdict.is_spam).toBe(false);
  });

  it('flags a contact-me advert even when its words look harmless', () => {
    const analysis = analyzeSpam(
      model,
      'Great beer for cheap, contact me on whatsapp +1 555 123 4567 for wholesale prices',
    );
    expect(analysis.is_spam).toBe(true);
    expect(analysis.signals.map((s) => s.code)).toContain('contact_info');
  });

  it('reports confidence as the probability of the predicted class', () => {
    for (const text of [
      'FREE MONEY!!!! www.win-now.biz',
      'How long should a lager be cold conditioned?',
      '',
    ]) {
      const analysis = analyzeSpam(model, text);
      const expected = analysis.is_spam ? analysis.probability : 1 - analysis.probability;
      expect(analysis.confidence).toBeCloseTo(expected, 3);
      expect(analysis.confidence).toBeGreaterThanOrEqual(0.5);
      expect(analysis.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('loads the model once per process', () => {
    expect(loadSpamModel()).toBe(model);
  });

  it('ships a small model that records its held-out figures', () => {
    expect(statSync(SPAM_MODEL_PATH).size).toBeLessThan(2 * 1024 * 1024);
    const file = readSpamModelFile();
    const heldOut = (file.training?.heldOut ?? {}) as Record<string, { accuracy: number }>;
    expect(heldOut.spamCheck?.accuracy).toBeGreaterThan(0.9);
  });
});
