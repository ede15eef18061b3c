import { afterAll, describe, expect, it, vi } from 'vitest';
import { drainHost, type DrainDeps } from '../../shared/verification/host-drainer.js';
import { createHostQueue, type HostWorkItem } from '../../shared/verification/host-queue.js';
import type { AddressedReply, HostReply } from '../../shared/verification/host-replies.js';
import type { SessionPool } from '../../shared/verification/host-sessions.js';
import { testRedis } from './helpers.js';

// A host job that takes a dead attempt's items back: the requesters that died with that attempt are re-run and ask
// for the same addresses again; the job answers them with what it has just probed, instead of probing again.

const store = testRedis('host-drainer');
afterAll(() => store.cleanup());

const HOST = 'mx.takeover.test';
const item = (address: string, ticket: string, maxAgeSec?: number): HostWorkItem => ({
  ticket,
  replyTo: 'nobody',
  domain: 'takeover.test',
  address,
  smtputf8: false,
  answerBy: Date.now() + 60_000,
  ...(maxAgeSec === undefined ? {} : { maxAgeSec }),
});

/** The announcements of pushes to the host, played by hand: `wakeAll` announces one to every lane listening. */
function announcements() {
  const listeners = new Set<() => void>();
  return {
    nextPush: () => {
      let listener = (): void => {};
      const promise = new Promise<void>((resolve) => (listener = resolve));
      listeners.add(listener);
      return { promise, cancel: () => listeners.delete(listener) };
    },
    wakeAll: () => {
      for (const wake of listeners) wake();
    },
  };
}

describe('a host job after a takeover', () => {
  it('answers a re-run requester with the evidence it has just probed, and probes what it has not', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: store.prefix,
      keyTtlMs: 60_000,
      claimTtlMs: 5000,
    });
    // The dead attempt of job-1 took ann and ben and never answered them.
    await queue.push(HOST, 'sync', [
      item('ann@takeover.test', 'dead-1'),
      item('ben@takeover.test', 'dead-2'),
    ]);
    expect(await queue.take(HOST, 'job-1', { maxBatch: 10, minBatch: 1, lanes: 1 })).toHaveLength(2);

    const probed: string[][] = [];
    const sent: AddressedReply[] = [];
    const pushes = announcements();
    const pool = { close: async () => {} } as unknown as SessionPool;
    const stop = new AbortController();
    const deps: DrainDeps = {
      queue,
      job: 'job-1',
      renewMs: 1000,
      limits: { maxBatch: 10, minBatch: 1 },
      lanes: 1,
      lingerMs: 10,
      takeoverLingerMs: 30_000,
      nextPush: pushes.nextPush,
      sessions: () => pool,
      cached: async () => new Map(),
      probe: async (_domain, targets) => {
        probed.push(targets.map((t) => t.address));
        return targets.map((): HostReply => ({ kind: 'probed', outcome: null, catchAll: false }));
      },
      send: async (replies) => void sent.push(...replies),
      signal: stop.signal,
    };
    // Its next attempt (same job id: stalled-job recovery) takes them back and probes them.
    const drained = drainHost(HOST, deps);
    await vi.waitFor(() => expect(sent).toHaveLength(2), { timeout: 10_000 });

    // The re-run requester asks for ann and ben again, and for cat; one asks for ann with max_age 0.
    await queue.push(HOST, 'sync', [
      item('ann@takeover.test', 'rerun-1'),
      item('ben@takeover.test', 'rerun-2'),
      item('cat@takeover.test', 'rerun-3'),
      item('ann@takeover.test', 'fresh-1', 0),
    ]);
    pushes.wakeAll();
    await vi.waitFor(() => expect(sent).toHaveLength(6), { timeout: 10_000 });

    expect(probed).toEqual([
      ['ann@takeover.test', 'ben@takeover.test'],
      ['cat@takeover.test', 'ann@takeover.test'],
    ]);
    expect(sent.map((r) => r.ticket).sort()).toEqual([
      'dead-1',
      'dead-2',
      'fresh-1',
      'rerun-1',
      'rerun-2',
      'rerun-3',
    ]);
    // Nothing is left: the job gives the host up once its (long) linger ends; cut it short.
    stop.abort();
    const report = await drained;
    expect(report).toMatchObject({ restored: 2, answered: 6, ownedElsewhere: false });
  });
});

describe('a host job whose lane fails', () => {
  it('ends with every lane stopped: none goes on taking the host work after the attempt failed', async () => {
    const queue = createHostQueue({
      redis: store.redis,
      keyPrefix: `${store.prefix}failing:`,
      keyTtlMs: 60_000,
      claimTtlMs: 5000,
    });
    await queue.push(HOST, 'sync', [
      item('ann@takeover.test', 't-1'),
      item('ben@takeover.test', 't-2'),
      item('cat@takeover.test', 't-3'),
    ]);
    // Each of the three lanes takes one address; the first to come back for more meets Redis failing (as a command
    // does once a Cluster client has run out of retries), while the other two linger for more work.
    let calls = 0;
    const failing: typeof queue = {
      ...queue,
      next: async (...args) => {
        if (++calls === 4) throw new Error('Too many Cluster redirections');
        return queue.next(...args);
      },
    };
    const probed: string[] = [];
    const pushes = announcements();
    const deps: DrainDeps = {
      queue: failing,
      job: 'job-1',
      renewMs: 1000,
      limits: { maxBatch: 10, minBatch: 1 },
      lanes: 3,
      lingerMs: 30_000,
      takeoverLingerMs: 30_000,
      nextPush: pushes.nextPush,
      sessions: () => ({ close: async () => {} }) as unknown as SessionPool,
      cached: async () => new Map(),
      probe: async (_domain, targets) => {
        probed.push(...targets.map((t) => t.address));
        return targets.map((): HostReply => ({ kind: 'probed', outcome: null, catchAll: false }));
      },
      send: async () => {},
      signal: new AbortController().signal,
    };
    await expect(drainHost(HOST, deps)).rejects.toThrow('Too many Cluster redirections');
    expect(probed.sort()).toEqual(['ann@takeover.test', 'ben@takeover.test', 'cat@takeover.test']);

    // Work pushed after the failure waits for the job's next attempt: no lane of the failed one takes it.
    const callsAtFailure = calls;
    await queue.push(HOST, 'sync', [item('dan@takeover.test', 't-4')]);
    pushes.wakeAll();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(calls).toBe(callsAtFailure);
    expect(probed).not.toContain('dan@takeover.test');
    expect(await queue.waiting(HOST)).toBe(1);
  });
});
