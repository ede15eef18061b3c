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
    const listeners = new Set<() => void>();
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
      nextPush: () => {
        let listener = (): void => {};
        const promise = new Promise<void>((resolve) => (listener = resolve));
        listeners.add(listener);
        return { promise, cancel: () => listeners.delete(listener) };
      },
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
    for (const wake of listeners) wake();
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
