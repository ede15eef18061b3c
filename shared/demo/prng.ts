/**
 * A small seeded PRNG (sfc32, seeded through splitmix32) so the demo data is a pure function of its seed:
 * the same `--questions N` gives byte-identical rows on every machine. Math.random is never used.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Picks with a Zipf-like bias towards the start of the list: a few items are common, the tail is rare. */
  skewed<T>(items: readonly T[], exponent = 1.6): T {
    return items[Math.floor(items.length * this.next() ** exponent)]!;
  }

  /** A count with a long tail (geometric with mean ≈ mean). */
  geometric(mean: number): number {
    if (mean <= 0) return 0;
    const p = 1 / (mean + 1);
    return Math.floor(Math.log(1 - this.next()) / Math.log(1 - p));
  }

  /** k distinct items from the list (k ≤ length), in the order drawn. */
  sample<T>(items: readonly T[], k: number, exponent = 1): T[] {
    const chosen = new Set<T>();
    const n = Math.min(k, items.length);
    while (chosen.size < n) chosen.add(exponent === 1 ? this.pick(items) : this.skewed(items, exponent));
    return [...chosen];
  }
}
