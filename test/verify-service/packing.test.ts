import { describe, expect, it } from 'vitest';
import { PACKED_JOB_ADDRESSES, packDomainGroups } from '../../shared/verification/service.js';

// How POST /bulk-verify splits a request's domains into verify jobs (pure: no Redis needed).

const group = (domain: string, n: number) => ({
  domain,
  emails: Array.from({ length: n }, (_, i) => `u${i}@${domain}`),
});

describe('packDomainGroups', () => {
  it('packs one-address domains into jobs of PACKED_JOB_ADDRESSES addresses', () => {
    const groups = Array.from({ length: 100 }, (_, i) => group(`d${i}.test`, 1));
    const jobs = packDomainGroups(groups);
    expect(jobs).toHaveLength(100 / PACKED_JOB_ADDRESSES);
    for (const job of jobs) expect(job).toHaveLength(PACKED_JOB_ADDRESSES);
    expect(
      jobs
        .flat()
        .map((g) => g.domain)
        .sort(),
    ).toEqual(groups.map((g) => g.domain).sort());
  });

  it('never splits a domain and gives big domains a job of their own, biggest first', () => {
    const jobs = packDomainGroups([
      group('small.test', 6),
      group('big.test', 50),
      group('mid.test', 20),
      group('tiny.test', 1),
    ]);
    // mid + small reach PACKED_JOB_ADDRESSES (25) and close their job; tiny starts the next.
    expect(jobs.map((job) => job.map((g) => `${g.domain}:${g.emails.length}`))).toEqual([
      ['big.test:50'],
      ['mid.test:20', 'small.test:6'],
      ['tiny.test:1'],
    ]);
  });

  it('gives nothing for nothing and one job for one domain', () => {
    expect(packDomainGroups([])).toEqual([]);
    expect(packDomainGroups([group('one.test', 100)])).toHaveLength(1);
  });
});
