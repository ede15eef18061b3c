import type { HostQueue, HostWorkItem, TakenItem, TakeLimits } from './host-queue.js';
import { type AddressedReply, type HostReply } from './host-replies.js';
import type { SessionPool } from './host-sessions.js';
import type { ProbeTarget } from './smtp-probe.js';
import type { VerificationResult } from './types.js';

/**
 * The processor of one host job (verify-hosts): the one place in the cluster that probes the host while the job
 * runs. It puts a dead attempt's in-flight items back, then runs `lanes` loops (VERIFY_MX_CONCURRENCY), each
 * taking a share of the host's pending work and probing it domain by domain over the job's pooled sessions. A lane
 * that finds nothing waits up to `lingerMs` for the next push to the host, keeping the sessions open for work that
 * is on its way; when every lane has lingered in vain the job completes and closes its sessions.
 */

export interface DrainDeps {
  queue: HostQueue;
  /** The host job's id: its name as the host's owner (host-queue.ts). */
  job: string;
  /** How often the job renews its ownership while it runs (a probe may outlast the ownership's TTL). */
  renewMs: number;
  limits: Omit<TakeLimits, 'lanes'>;
  lanes: number;
  lingerMs: number;
  /**
   * How long a job that took a dead attempt's items back lingers instead: their requesters may have died with that
   * attempt, and are re-run by stalled-job recovery at about the same time, asking for the same addresses again.
   */
  takeoverLingerMs: number;
  /** Settles when work is next pushed for the host (host-queue.ts announces each push); cancel() stops listening. */
  nextPush(host: string): { promise: Promise<void>; cancel(): void };
  /** A fresh per-job session pool. */
  sessions(): SessionPool;
  /** Verdicts kept in the result cache young enough for `maxAgeSec`, by address. */
  cached(addresses: string[], maxAgeSec: number | undefined): Promise<Map<string, VerificationResult>>;
  /** Probes distinct addresses of one domain over the pool: one evidence per target, in order. */
  probe(domain: string, targets: ProbeTarget[], pool: SessionPool): Promise<HostReply[]>;
  send(replies: AddressedReply[]): Promise<void>;
  /** Stops the job early (the process is shutting down). */
  signal: AbortSignal;
}

export interface DrainReport {
  /** Items answered (probed or from the cache). */
  answered: number;
  /** Items dropped because their requester had stopped waiting. */
  expired: number;
  /** In-flight items of a dead attempt put back at the start. */
  restored: number;
  /** Another live job owned the host: this one ended at once. */
  ownedElsewhere: boolean;
}

/** Wakes the longest-waiting of a set of listeners, if any, and forgets it: one wake-up per event, not a stampede. */
export function wakeOne(listeners: Set<() => void> | undefined): void {
  const first = listeners?.values().next().value;
  if (!first) return;
  listeners!.delete(first);
  first();
}

export async function drainHost(host: string, deps: DrainDeps): Promise<DrainReport> {
  const { job } = deps;
  const restored = await deps.queue.restore(host, job);
  const report: DrainReport = {
    answered: 0,
    expired: 0,
    restored: restored ?? 0,
    ownedElsewhere: restored === null,
  };
  if (restored === null) return report;
  const lingerMs = restored ? Math.max(deps.lingerMs, deps.takeoverLingerMs) : deps.lingerMs;
  // After a takeover, what this job probed, by address: a re-run requester's items get the same evidence instead of
  // a second probe (its dead predecessor never stored the verdicts in the result cache). Bounded by the job's life
  // and by ANSWERED_MAX.
  const answered = restored ? new Map<string, { reply: HostReply; at: number }>() : null;
  const answeredFor = (item: HostWorkItem): HostReply | undefined => {
    const kept = answered?.get(item.address);
    const young = kept && (item.maxAgeSec === undefined || Date.now() - kept.at <= item.maxAgeSec * 1000);
    return young ? kept.reply : undefined;
  };
  // Lost ownership (this process stalled past the TTL and another job took the host): stop taking work.
  const lost = new AbortController();
  // A lane failed (Redis unreachable past the client's retries): the attempt ends, and its other lanes with it. A
  // lane left running would go on taking the host's work under the job's id, beside the next attempt of the same
  // job, and answer it over the closed session pool (every item `unknown`) for as long as work kept coming.
  const failed = new AbortController();
  const signal = AbortSignal.any([deps.signal, lost.signal, failed.signal]);
  const renewal = setInterval(() => {
    deps.queue.renew(host, job).then(
      (owned) => owned || lost.abort(),
      () => {}, // Redis unreachable: the next take or renewal tries again
    );
  }, deps.renewMs);
  let pool: SessionPool | null = null;
  const limits = { ...deps.limits, lanes: deps.lanes };
  // Probes under way in this job, by address.
  const probing = new Map<string, Promise<HostReply>>();

  // Lanes of this job lingering for work: a lane that takes its share while more waits wakes one of them (the
  // announcement of a push wakes one lingering lane only, host-dispatch.ts).
  const lingering = new Set<() => void>();
  const wakeSibling = (): void => wakeOne(lingering);

  async function lane(): Promise<void> {
    let idleSince = Date.now();
    // Items answered (replies sent) whose removal from in-flight rides on the lane's next take.
    let answered: TakenItem[] = [];
    try {
      while (!signal.aborted) {
        // Listening before looking: a push between the look and the wait still wakes this lane.
        const pushed = deps.nextPush(host);
        let announced = false;
        void pushed.promise.then(() => (announced = true));
        const share = await deps.queue.next(host, job, limits, answered);
        answered = [];
        if (share.taken.length === 0) {
          const left = lingerMs - (Date.now() - idleSince);
          if (left <= 0) {
            pushed.cancel();
            return;
          }
          let wake = (): void => {};
          const woken = new Promise<void>((resolve) => (wake = resolve));
          lingering.add(wake);
          await Promise.race([pushed.promise, woken, sleep(left, signal)]);
          lingering.delete(wake);
          pushed.cancel();
          continue;
        }
        pushed.cancel();
        // More than this share waits, or a push was announced to this lane while it was taking (it may have come
        // after the take): a lingering lane looks too.
        if (share.waiting > 0 || announced) wakeSibling();
        await serve(share.taken);
        answered = share.taken;
        idleSince = Date.now();
      }
    } catch (err) {
      failed.abort(err);
      throw err;
    } finally {
      if (answered.length > 0) await deps.queue.done(host, answered);
    }
  }

  /** Probes one share or answers it from the cache, and sends its replies; the lane takes it off in-flight after. */
  async function serve(taken: TakenItem[]): Promise<void> {
    const now = Date.now();
    const live = taken.filter((t) => t.item.answerBy > now);
    report.expired += taken.length - live.length;
    const replies: AddressedReply[] = [];
    const answer = (item: HostWorkItem, reply: HostReply): void => {
      replies.push({ replyTo: item.replyTo, ticket: item.ticket, reply });
    };
    // A requester re-run after a crash asks again for what may have been answered and stored meanwhile.
    const toProbe: HostWorkItem[] = [];
    for (const [maxAgeSec, items] of groupBy(live, (t) => t.item.maxAgeSec)) {
      const kept = await deps.cached(
        items.map((t) => t.item.address),
        maxAgeSec,
      );
      for (const { item } of items) {
        const result = kept.get(item.address);
        const evidence = result ? undefined : answeredFor(item);
        if (result) answer(item, { kind: 'cached', result });
        else if (evidence) answer(item, evidence);
        else toProbe.push(item);
      }
    }
    for (const [domain, items] of groupBy(toProbe, (i) => i.domain)) {
      // An address another lane is probing (asked by two requests, or by a re-run requester) joins that probe.
      const fresh = [...new Map(items.map((i) => [i.address, i])).values()].filter(
        (i) => !probing.has(i.address),
      );
      if (fresh.length > 0) {
        const evidence = deps.probe(
          domain,
          fresh.map((i) => ({ address: i.address, smtputf8: i.smtputf8 })),
          pool!,
        );
        fresh.forEach((item, k) => {
          const one = evidence.then((all) => all[k]!);
          one.catch(() => {}); // the lane awaiting it below reports the failure
          probing.set(item.address, one);
          void one.finally(() => probing.delete(item.address)).catch(() => {});
        });
      }
      const found = await Promise.all(items.map((i) => probing.get(i.address)!));
      items.forEach((item, k) => answer(item, found[k]!));
      if (answered && answered.size < ANSWERED_MAX)
        items.forEach((item, k) => answered.set(item.address, { reply: found[k]!, at: Date.now() }));
    }
    // The replies first: the share leaves in-flight only once they are written (with the lane's next take).
    await deps.send(replies);
    report.answered += replies.length;
  }

  let released = false;
  try {
    // The claim is given up only with nothing pending: pushes that found it added no job and are this job's work.
    // (A job added while the previous one was lingering usually finds its work done and ends here at once.)
    while (!signal.aborted && !(released = await deps.queue.release(host, job))) {
      pool ??= deps.sessions();
      // Every lane settled before the attempt ends: none outlives the pool or the job's ownership.
      const lanes = await Promise.allSettled(Array.from({ length: Math.max(1, deps.lanes) }, lane));
      const failure = lanes.find((l) => l.status === 'rejected');
      if (failure) throw failure.reason;
    }
  } finally {
    clearInterval(renewal);
    // Ending with work left (shutdown, a failure): the next push must add a job, not trust this one's claim.
    if (!released) await deps.queue.unclaim(host, job).catch(() => {});
    await (pool as SessionPool | null)?.close();
  }
  return report;
}

// The most evidence a job keeps after a takeover: a dead attempt held at most a few sessions' worth of items.
const ANSWERED_MAX = 10_000;

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k) ?? [];
    list.push(item);
    groups.set(k, list);
  }
  return groups;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  // An abort that came while the lane was waiting for Redis fires no event any more.
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
