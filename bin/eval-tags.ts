/**
 * npx tsx bin/eval-tags.ts [path/to/Posts.xml] — measures suggest_tags on a Stack Exchange dump:
 * 20% of the questions (seeded shuffle) have their tags hidden and are tagged by an index built
 * from the other 80%. Prints precision@3 and recall@5, with a most-popular-tags baseline.
 */
import { join } from 'node:path';
import { evaluateTagSuggestions } from '../shared/ai/eval/tag-eval.js';
import { BEER_DUMP_DIR } from '../shared/datasets.js';
import { readStackExchangeQuestions } from '../shared/ai/tags/stackexchange-posts.js';

const DEFAULT_POSTS = join(BEER_DUMP_DIR, 'Posts.xml');
const SEED = 42;
const TEST_SHARE = 0.2;

const path = process.argv[2] ?? DEFAULT_POSTS;
const questions = [];
for await (const question of readStackExchangeQuestions(path)) questions.push(question);

const result = await evaluateTagSuggestions(questions, { seed: SEED, testShare: TEST_SHARE });
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

console.log(
  `${path}: ${questions.length} questions; index from ${result.train}, ${result.test} held out ` +
    `(seed ${SEED}); ${result.tags} distinct tags in the index`,
);
console.log('');
console.log('| held-out questions | precision@3 | recall@5 |');
console.log('|---|---|---|');
console.log(`| suggest_tags | ${pct(result.precisionAt3)} | ${pct(result.recallAt5)} |`);
console.log(
  `| ceiling (every tag found; ${result.meanTagsPerQuestion.toFixed(2)} tags per question) | ` +
    `${pct(result.ceilingPrecisionAt3)} | 100.0% |`,
);
console.log(
  `| baseline: most popular tags | ${pct(result.baseline.precisionAt3)} | ${pct(result.baseline.recallAt5)} |`,
);
