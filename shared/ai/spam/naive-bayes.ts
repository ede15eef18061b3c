/**
 * Multinomial naive Bayes with Laplace (add-alpha) smoothing, computed in log space so that long
 * texts do not underflow. Two classes only: spam and ham.
 *
 * Training produces raw counts (the committed JSON); loading turns them into log-likelihoods once.
 */
import { TOKENIZER_VERSION } from './tokenize.js';

export type SpamClass = 'spam' | 'ham';

/** The committed file format. Counts, not probabilities, so the file stays diffable and exact. */
export interface SpamModelFile {
  format: 'agora-spam-naive-bayes';
  version: 1;
  tokenizerVersion: number;
  alpha: number;
  docs: Record<SpamClass, number>;
  /** Token occurrences per class, over the kept vocabulary only (so smoothing stays consistent). */
  totals: Record<SpamClass, number>;
  vocabulary: string[];
  spamCounts: number[];
  hamCounts: number[];
  /** How the file was made and how it scored on the held-out split; informational. */
  training?: Record<string, unknown>;
}

export class NaiveBayesTrainer {
  private readonly counts = new Map<string, [number, number]>();
  private readonly docs: Record<SpamClass, number> = { spam: 0, ham: 0 };

  add(tokens: readonly string[], label: SpamClass): void {
    this.docs[label] += 1;
    const slot = label === 'spam' ? 0 : 1;
    for (const token of tokens) {
      let pair = this.counts.get(token);
      if (!pair) {
        pair = [0, 0];
        this.counts.set(token, pair);
      }
      pair[slot] += 1;
    }
  }

  /**
   * Rare tokens are mostly typos, ids and base64 debris; dropping them keeps the committed file
   * small and barely moves accuracy (measured by bin/train-spam.ts). Sorted for a stable file.
   */
  toFile(options: { minCount: number; alpha: number; training?: Record<string, unknown> }): SpamModelFile {
    const kept = [...this.counts.entries()]
      .filter(([, [s, h]]) => s + h >= options.minCount)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const spamCounts = kept.map(([, [s]]) => s);
    const hamCounts = kept.map(([, [, h]]) => h);
    return {
      format: 'agora-spam-naive-bayes',
      version: 1,
      tokenizerVersion: TOKENIZER_VERSION,
      alpha: options.alpha,
      docs: { ...this.docs },
      totals: { spam: sum(spamCounts), ham: sum(hamCounts) },
      vocabulary: kept.map(([token]) => token),
      spamCounts,
      hamCounts,
      ...(options.training ? { training: options.training } : {}),
    };
  }
}

export interface NaiveBayesScore {
  /** ln P(spam | tokens) - ln P(ham | tokens). Positive means spam is more likely. */
  logit: number;
  /** Tokens that were in the vocabulary; unknown tokens carry no evidence and are skipped. */
  knownTokens: number;
}

export class NaiveBayesModel {
  private readonly logRatio = new Map<string, number>();
  private readonly priorLogit: number;

  constructor(file: SpamModelFile) {
    if (file.format !== 'agora-spam-naive-bayes' || file.version !== 1) {
      throw new Error('spam model: unknown file format');
    }
    if (file.tokenizerVersion !== TOKENIZER_VERSION) {
      throw new Error(
        `spam model: trained with tokenizer v${file.tokenizerVersion}, code has v${TOKENIZER_VERSION}; run npm run train:spam`,
      );
    }
    const v = file.vocabulary.length;
    const spamDenominator = Math.log(file.totals.spam + file.alpha * v);
    const hamDenominator = Math.log(file.totals.ham + file.alpha * v);
    file.vocabulary.forEach((token, i) => {
      const spamLog = Math.log((file.spamCounts[i] ?? 0) + file.alpha) - spamDenominator;
      const hamLog = Math.log((file.hamCounts[i] ?? 0) + file.alpha) - hamDenominator;
      // Only the difference matters for two classes, so one number per token is stored.
      this.logRatio.set(token, spamLog - hamLog);
    });
    this.priorLogit =
      Math.log(file.docs.spam / (file.docs.spam + file.docs.ham)) -
      Math.log(file.docs.ham / (file.docs.spam + file.docs.ham));
  }

  get vocabularySize(): number {
    return this.logRatio.size;
  }

  score(tokens: readonly string[]): NaiveBayesScore {
    let logit = this.priorLogit;
    let knownTokens = 0;
    for (const token of tokens) {
      const ratio = this.logRatio.get(token);
      if (ratio === undefined) continue;
      logit += ratio;
      knownTokens += 1;
    }
    return { logit, knownTokens };
  }

  /** Per-token evidence, strongest first; used in tests and to explain a verdict. */
  evidence(tokens: readonly string[], limit = 10): Array<{ token: string; weight: number }> {
    const seen = new Map<string, number>();
    for (const token of tokens) {
      const ratio = this.logRatio.get(token);
      if (ratio !== undefined) seen.set(token, (seen.get(token) ?? 0) + ratio);
    }
    return [...seen.entries()]
      .map(([token, weight]) => ({ token, weight }))
      .sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight))
      .slice(0, limit);
  }
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
