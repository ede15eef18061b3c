/**
 * How far a replica is behind its primary, in time: the primary's WAL position is sampled at every health check,
 * and a replica whose replay position is X lacks what the primary had written by the first sample beyond X, so it
 * is at least (now − that sample's time) behind. Byte counts (pg_wal_lsn_diff) say nothing about staleness, and
 * pg_last_xact_replay_timestamp() grows while the primary is idle, which would leave a caught-up replica out.
 * The measure is as fine as the sampling interval.
 */

/** A WAL position ("16/B374D848": two hexadecimal halves) as one number of bytes. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  if (high === undefined || low === undefined || !/^[0-9A-F]+$/i.test(high + low))
    throw new Error(`not a WAL position: ${JSON.stringify(text)}`);
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

interface Sample {
  at: number;
  lsn: bigint;
}

export class PrimaryWalHistory {
  private samples: Sample[] = [];

  /** keepMs: how long samples are kept; any replica further behind is reported at least this far behind. */
  constructor(private readonly keepMs: number) {}

  record(lsn: bigint, at: number): void {
    const last = this.samples.at(-1);
    // Only the first time a position was seen matters: a later sample of the same position adds nothing.
    if (!last || lsn > last.lsn) this.samples.push({ at, lsn });
    while (this.samples.length > 1 && this.samples[0]!.at < at - this.keepMs) this.samples.shift();
  }

  /** The replica's lag in ms, or undefined before the primary was ever sampled (unknown). */
  lagMs(replayed: bigint, now: number): number | undefined {
    if (this.samples.length === 0) return undefined;
    const firstAhead = this.samples.find((sample) => sample.lsn > replayed);
    return firstAhead ? Math.max(0, now - firstAhead.at) : 0;
  }
}
