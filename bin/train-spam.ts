/**
 * npm run train:spam — rebuilds shared/ai/models/spam-model.json from the SpamAssassin corpus and
 * prints held-out accuracy, precision and recall. Deterministic: same corpus, same file.
 */
import { SPAM_MODEL_PATH, writeSpamModelFile } from '../shared/ai/spam/model-file.js';
import { DEFAULT_TRAIN_OPTIONS, trainSpamModel } from '../shared/ai/spam/train.js';
import type { BinaryMetrics } from '../shared/ai/eval/metrics.js';

const started = Date.now();
const result = trainSpamModel(DEFAULT_TRAIN_OPTIONS);
const bytes = writeSpamModelFile(result.file, SPAM_MODEL_PATH);

const pct = (x: number): string => `${(x * 100).toFixed(2)}%`;
const row = (name: string, m: BinaryMetrics): string =>
  `| ${name} | ${pct(m.accuracy)} | ${pct(m.precision)} | ${pct(m.recall)} | ${pct(m.f1)} | ` +
  `${m.truePositives}/${m.falsePositives}/${m.trueNegatives}/${m.falseNegatives} |`;

console.log(
  `Split: seed ${DEFAULT_TRAIN_OPTIONS.seed}, ${result.counts.train} train ` +
    `(${result.counts.trainSpam} spam) / ${result.counts.test} held out (${result.counts.testSpam} spam)`,
);
console.log(
  `Model: ${result.file.vocabulary.length} tokens (min count ${DEFAULT_TRAIN_OPTIONS.minCount}), ` +
    `${(bytes / 1024).toFixed(0)} KiB → ${SPAM_MODEL_PATH}`,
);
console.log('');
console.log('| held-out 20% | accuracy | precision | recall | F1 | TP/FP/TN/FN |');
console.log('|---|---|---|---|---|---|');
console.log(row('naive Bayes alone', result.classifier));
console.log(row('spam_check (naive Bayes + forum signals)', result.spamCheck));
console.log(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s`);
