/**
 * Deterministic train/test splits for the training and evaluation scripts: the same seed always
 * gives the same held-out set, so figures in docs/ai.md can be reproduced exactly.
 */

/** mulberry32: tiny, fast and good enough for shuffling; Math.random cannot be seeded. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const random = seededRandom(seed);
  // Fisher–Yates.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = out[i] as T;
    out[i] = out[j] as T;
    out[j] = a;
  }
  return out;
}

export function holdOut<T>(items: readonly T[], seed: number, testShare = 0.2): { train: T[]; test: T[] } {
  const shuffled = seededShuffle(items, seed);
  const testSize = Math.round(shuffled.length * testShare);
  return { test: shuffled.slice(0, testSize), train: shuffled.slice(testSize) };
}
