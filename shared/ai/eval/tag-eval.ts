/**
 * Held-out evaluation of suggest_tags: a deterministic share of the questions has its tags hidden,
 * the index is built from the rest, and each hidden question's suggestions are scored against its
 * real tags. A most-popular-tags baseline is reported alongside, so the figure has a yardstick.
 */
import { htmlToText } from '../text/html-to-text.js';
import { buildTagIndex } from '../tags/tag-index.js';
import { suggestTags } from '../tags/suggest-tags.js';
import { slugifyTag, type TagRecord } from '../tags/tag-record.js';
import { holdOut } from './split.js';
import { mean, precisionAtK, recallAtK } from './metrics.js';

export interface TagEvalResult {
  train: number;
  test: number;
  tags: number;
  precisionAt3: number;
  recallAt5: number;
  /** Best possible precision@3: a question with one tag can score at most 1/3. */
  ceilingPrecisionAt3: number;
  meanTagsPerQuestion: number;
  baseline: { precisionAt3: number; recallAt5: number };
}

export async function evaluateTagSuggestions(
  questions: readonly TagRecord[],
  options: { seed: number; testShare: number },
): Promise<TagEvalResult> {
  const tagged = questions.filter((q) => q.tags.length > 0);
  const { train, test } = holdOut(tagged, options.seed, options.testShare);
  const index = await buildTagIndex(train);
  const popular = [...index.tags]
    .sort((a, b) => b.count - a.count || (a.slug < b.slug ? -1 : 1))
    .map((t) => t.slug);

  const p3: number[] = [];
  const r5: number[] = [];
  const baseP3: number[] = [];
  const baseR5: number[] = [];
  const ceiling: number[] = [];
  for (const question of test) {
    const actual = new Set(question.tags.map((t) => (typeof t === 'string' ? slugifyTag(t) : t.slug)));
    // The tags are hidden: only what a user would type (title and body) is given.
    const content = `${question.title}\n\n${htmlToText(question.body)}`;
    const suggested = suggestTags(index, content, 5).map((t) => t.slug);
    p3.push(precisionAtK(suggested, actual, 3));
    r5.push(recallAtK(suggested, actual, 5));
    baseP3.push(precisionAtK(popular, actual, 3));
    baseR5.push(recallAtK(popular, actual, 5));
    ceiling.push(Math.min(actual.size, 3) / 3);
  }
  return {
    train: train.length,
    test: test.length,
    tags: index.tags.length,
    precisionAt3: mean(p3),
    recallAt5: mean(r5),
    ceilingPrecisionAt3: mean(ceiling),
    meanTagsPerQuestion: mean(test.map((q) => q.tags.length)),
    baseline: { precisionAt3: mean(baseP3), recallAt5: mean(baseR5) },
  };
}
