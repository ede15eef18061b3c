import { describe, expect, it } from 'vitest';
import { parseLsn, PrimaryWalHistory } from '../../shared/db/replicas/lag.js';

describe('replica lag', () => {
  it('reads WAL positions as byte offsets', () => {
    expect(parseLsn('0/3016060')).toBe(0x3016060n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(() => parseLsn('nonsense')).toThrow(/not a WAL position/);
  });

  it('measures how long ago the primary first passed what the replica has replayed', () => {
    const history = new PrimaryWalHistory(60_000);
    expect(history.lagMs(100n, 0)).toBeUndefined();
    history.record(100n, 1000);
    history.record(100n, 1500); // the primary idle: no new position
    history.record(200n, 2000);
    history.record(300n, 2500);
    expect(history.lagMs(300n, 9000)).toBe(0); // caught up, however long the primary stays idle
    expect(history.lagMs(400n, 9000)).toBe(0);
    expect(history.lagMs(250n, 3000)).toBe(500); // lacks what the primary had at 2500
    expect(history.lagMs(100n, 3000)).toBe(1000);
    expect(history.lagMs(50n, 3000)).toBe(2000);
  });

  it('still reports a replica further behind than its memory as at least that far behind', () => {
    const history = new PrimaryWalHistory(1000);
    for (let at = 0; at <= 10_000; at += 500) history.record(BigInt(at + 1), at);
    expect(history.lagMs(0n, 10_000)).toBeGreaterThanOrEqual(1000);
  });
});
