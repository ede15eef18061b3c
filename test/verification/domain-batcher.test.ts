import { describe, expect, it } from 'vitest';
import { createDomainBatcher } from '../../shared/verification/domain-batcher.js';

// How concurrent work for one domain is shared out among its probes (pure: the probe is a function the test
// finishes by hand).

interface Probe {
  domain: string;
  items: string[];
  finish(): void;
  fail(err: Error): void;
}

function recordingBatcher(maxRunning = 2, maxBatch = 19, minBatch = 1) {
  const probes: Probe[] = [];
  const batcher = createDomainBatcher<string, string>({
    maxRunning,
    maxBatch,
    minBatch,
    key: (item) => item,
    run: (domain, items) =>
      new Promise((resolve, reject) =>
        probes.push({
          domain,
          items,
          finish: () => resolve(items.map((item) => `checked ${item}`)),
          fail: reject,
        }),
      ),
  });
  return { batcher, probes };
}

const items = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('domain batcher', () => {
  it('starts at once on an idle domain, spreading the items over the free probes', () => {
    const { batcher, probes } = recordingBatcher();
    void batcher.submit('a.test', items('u', 10));
    expect(probes.map((p) => p.items.length)).toEqual([5, 5]);
    void batcher.submit('b.test', ['x']);
    expect(probes.map((p) => `${p.domain}:${p.items.length}`)).toEqual(['a.test:5', 'a.test:5', 'b.test:1']);
  });

  it('lets arrivals wait while every probe runs; an ending probe takes its share of them, not all', async () => {
    const { batcher, probes } = recordingBatcher();
    void batcher.submit('a.test', items('first', 2));
    void batcher.submit('a.test', items('late', 11));
    expect(probes).toHaveLength(2);
    probes[0]!.finish();
    await settle();
    // 11 wait for two probes: the one that ended takes 6 and leaves 5 for the other.
    expect(probes[2]!.items).toEqual(items('late', 6));
    probes[1]!.finish();
    await settle();
    expect(probes[3]!.items).toEqual(['late6', 'late7', 'late8']);
  });

  it('splits no share smaller than minBatch off to a probe of its own, unless that is all that waits', async () => {
    const { batcher, probes } = recordingBatcher(2, 19, 4);
    void batcher.submit('a.test', items('u', 4));
    expect(probes.map((p) => p.items.length)).toEqual([4]);
    void batcher.submit('b.test', items('v', 7));
    expect(probes.slice(1).map((p) => p.items.length)).toEqual([4, 3]);
    void batcher.submit('c.test', items('w', 8));
    void batcher.submit('c.test', items('x', 5));
    probes.at(-1)!.finish();
    await settle();
    // 5 wait for two probes: 3 would be the share, but 4 is the least worth a round of its own.
    expect(probes.at(-1)!.items).toHaveLength(4);
  });

  it('takes at most maxBatch items per probe', async () => {
    const { batcher, probes } = recordingBatcher(2, 3);
    void batcher.submit('a.test', items('u', 2));
    void batcher.submit('a.test', items('v', 20));
    probes[0]!.finish();
    await settle();
    expect(probes[2]!.items).toHaveLength(3);
  });

  it("answers each caller with its own items' results in order, even when its items went to several probes", async () => {
    const { batcher, probes } = recordingBatcher();
    const first = batcher.submit('a.test', ['a', 'b', 'c']);
    const second = batcher.submit('a.test', ['d']);
    // a, b and c were shared out as [a, b] and [c]; d waits for the first probe to end.
    expect(probes.map((p) => p.items)).toEqual([['a', 'b'], ['c']]);
    probes[0]!.finish();
    await settle();
    probes[1]!.finish();
    probes[2]!.finish();
    expect(await first).toEqual(['checked a', 'checked b', 'checked c']);
    expect(await second).toEqual(['checked d']);
  });

  it('probes an item once while it waits, however many callers ask for it', async () => {
    const { batcher, probes } = recordingBatcher(1);
    void batcher.submit('a.test', ['busy']);
    const first = batcher.submit('a.test', ['a', 'b', 'a']);
    const second = batcher.submit('a.test', ['b', 'c']);
    probes[0]!.finish();
    await settle();
    expect(probes[1]!.items).toEqual(['a', 'b', 'c']);
    probes[1]!.finish();
    expect(await first).toEqual(['checked a', 'checked b', 'checked a']);
    expect(await second).toEqual(['checked b', 'checked c']);
  });

  it("fails the callers of a failed probe's items, and only them", async () => {
    const { batcher, probes } = recordingBatcher(1);
    const doomed = batcher.submit('a.test', ['a']);
    const fine = batcher.submit('a.test', ['b']);
    probes[0]!.fail(new Error('connection refused'));
    await expect(doomed).rejects.toThrow('connection refused');
    await settle();
    probes[1]!.finish();
    expect(await fine).toEqual(['checked b']);
  });
});
