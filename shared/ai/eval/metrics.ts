/** Evaluation figures reported by bin/train-spam.ts and bin/eval-tags.ts. */

export interface BinaryMetrics {
  total: number;
  truePositives: number;
  falsePositives: number;
  trueNegatives: number;
  falseNegatives: number;
  accuracy: number;
  precision: number;
  recall: number;
  f1: number;
}

/** `positive` is the spam class. Pairs are [predicted, actual]. */
export function binaryMetrics(pairs: Iterable<readonly [boolean, boolean]>): BinaryMetrics {
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  for (const [predicted, actual] of pairs) {
    if (predicted && actual) tp++;
    else if (predicted) fp++;
    else if (actual) fn++;
    else tn++;
  }
  const total = tp + fp + tn + fn;
  const precision = ratio(tp, tp + fp);
  const recall = ratio(tp, tp + fn);
  return {
    total,
    truePositives: tp,
    falsePositives: fp,
    trueNegatives: tn,
    falseNegatives: fn,
    accuracy: ratio(tp + tn, total),
    precision,
    recall,
    f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall),
  };
}

/** Share of the first k suggestions that are correct (fewer than k suggestions count as misses). */
export function precisionAtK(suggested: readonly string[], actual: ReadonlySet<string>, k: number): number {
  const hits = suggested.slice(0, k).filter((s) => actual.has(s)).length;
  return hits / k;
}

/** Share of the true labels found among the first k suggestions. */
export function recallAtK(suggested: readonly string[], actual: ReadonlySet<string>, k: number): number {
  if (actual.size === 0) return 0;
  const hits = suggested.slice(0, k).filter((s) => actual.has(s)).length;
  return hits / actual.size;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}
