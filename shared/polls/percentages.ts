/**
 * Percentages to one decimal that add up to exactly 100 (largest remainder, Hamilton's method): every option
 * gets the floor of its share in tenths of a percent, and the tenths left over go to the options with the
 * largest remainders. Ties go to the option listed first, so the same counts always give the same figures.
 * With no votes at all every option is 0.
 */
export function percentages(votes: readonly number[]): number[] {
  const total = votes.reduce((sum, v) => sum + v, 0);
  if (total === 0) return votes.map(() => 0);
  const UNITS = 1000; // tenths of a percent
  // Integer arithmetic: votes * 1000 stays far below 2^53 for any real poll.
  const shares = votes.map((v, index) => ({
    index,
    floor: Math.floor((v * UNITS) / total),
    remainder: (v * UNITS) % total,
  }));
  let left = UNITS - shares.reduce((sum, s) => sum + s.floor, 0);
  const byRemainder = [...shares].sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  const tenths = shares.map((s) => s.floor);
  for (const share of byRemainder) {
    if (left === 0) break;
    if (share.remainder === 0) break;
    tenths[share.index]! += 1;
    left -= 1;
  }
  return tenths.map((t) => t / 10);
}
