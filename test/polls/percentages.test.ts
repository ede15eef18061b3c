import { describe, expect, it } from 'vitest';
import { percentages } from '../../shared/polls/percentages.js';
import { clientNetwork, voterId } from '../../shared/polls/voter.js';

const tenths = (values: number[]) => values.reduce((sum, v) => sum + Math.round(v * 10), 0);

describe('percentages (largest remainder, one decimal)', () => {
  it('is 0 for every option when nobody voted', () => {
    expect(percentages([0, 0, 0])).toEqual([0, 0, 0]);
    expect(percentages([])).toEqual([]);
  });

  it('gives the leftover tenth to the largest remainder, the first option on a tie', () => {
    expect(percentages([1, 1, 1])).toEqual([33.4, 33.3, 33.3]);
    expect(percentages([2, 1])).toEqual([66.7, 33.3]);
    expect(percentages([1, 2])).toEqual([33.3, 66.7]);
    expect(percentages([1, 0, 0])).toEqual([100, 0, 0]);
    expect(percentages([1, 1, 1, 1, 1, 1, 1])).toEqual([14.3, 14.3, 14.3, 14.3, 14.3, 14.3, 14.2]);
  });

  it('never gives a share to an option without votes', () => {
    expect(percentages([1, 1, 1, 0])).toEqual([33.4, 33.3, 33.3, 0]);
  });

  it('always sums to exactly 100 with one decimal', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let run = 0; run < 2000; run++) {
      const votes = Array.from({ length: 2 + Math.floor(random() * 19) }, () =>
        Math.floor(random() * (run % 2 ? 10 : 100_000)),
      );
      if (!votes.some((v) => v > 0)) votes[0] = 1;
      const result = percentages(votes);
      expect(tenths(result)).toBe(1000);
      for (const p of result) expect(Math.round(p * 10)).toBeCloseTo(p * 10, 9);
      // Each share is within one tenth of the exact share.
      const total = votes.reduce((s, v) => s + v, 0);
      votes.forEach((v, i) => expect(Math.abs(result[i]! - (100 * v) / total)).toBeLessThan(0.1 + 1e-9));
    }
  });
});

describe('voter identity', () => {
  it("is the key's user when there is one, whatever the address", () => {
    expect(voterId(7, '192.0.2.1', 's')).toBe('user:7');
  });

  it('is a keyed hash of the client address, never the address itself', () => {
    const a = voterId(null, '192.0.2.1', 'secret');
    expect(a).toMatch(/^client:[A-Za-z0-9_-]{32}$/);
    expect(a).not.toContain('192.0.2.1');
    expect(voterId(null, '192.0.2.1', 'secret')).toBe(a);
    expect(voterId(null, '192.0.2.2', 'secret')).not.toBe(a);
    expect(voterId(null, '192.0.2.1', 'another secret')).not.toBe(a);
    expect(voterId(null, '::ffff:192.0.2.1', 'secret')).toBe(a);
  });

  it('treats an IPv6 client as its /64', () => {
    expect(clientNetwork('2001:db8:1:2::5')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
    expect(voterId(null, '2001:db8:1:2::5', 's')).toBe(voterId(null, '2001:db8:1:2:ffff::1', 's'));
    expect(voterId(null, '2001:db8:1:2::5', 's')).not.toBe(voterId(null, '2001:db8:1:3::5', 's'));
  });
});
