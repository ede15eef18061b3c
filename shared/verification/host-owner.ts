import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Subscriptions } from './subscriptions.js';
import type { ProbeOutcome, ProbeTarget } from './smtp-probe.js';

/**
 * One process at a time probes a given MX host; the others forward their probes of it there. Connections are
 * pooled per process, so without this a host's addresses, spread over N worker processes, would need N
 * connections taking turns for the host's few slots, each carrying one or two RCPTs.
 *
 * - Ownership: `mx-owner:<host>` holds the id of the process probing the host, with a short TTL that the owner
 *   renews while it probes. A process that finds no owner takes the host.
 * - Forwarding: the work (domains and their addresses) a process has for one owner in one event-loop turn goes
 *   as one envelope on the owner's list `mx-inbox:<owner>`, and a message on `mx-work:<owner>` wakes it; the owner
 *   runs each domain as one of its own (joined with its other work for the domain) and publishes each domain's
 *   evidence on `mx-reply:<requester>` as soon as that domain is done.
 * - Failure: every process keeps `mx-alive:<id>` alive with a heartbeat. A requester whose owner stopped beating
 *   (killed, lost Redis) takes its request back and probes the host itself, as it does when no answer came within
 *   the probe deadline; it also takes over the dead owner's claims (hosts it knows the dead one held, and any
 *   claim of the dead one it meets later), so no further work is forwarded to a process that is gone. Probing
 *   twice is harmless: RCPT changes nothing on the server. Every period here comes from dispatch-timers.ts.
 */

/** Addresses of one domain to probe, as sent to the process that owns the domain's first MX host. */
export interface DomainWork {
  domain: string;
  targets: ProbeTarget[];
}

/** What the probe found about one target: its RCPT's outcome and the domain's catch-all verdict. */
export interface TargetEvidence {
  outcome: ProbeOutcome | null;
  catchAll: boolean | null;
}

/** One domain's work as forwarded, with the domain's first MX host, which the receiver owns. */
interface ForwardedWork extends DomainWork {
  host: string;
}

/** The work one requester sends one owner in one event-loop turn. */
interface Envelope {
  id: string;
  from: string;
  items: ForwardedWork[];
}

/** The evidence for one item of an envelope, on its way back to the requester (each item as soon as it is done). */
interface Report {
  id: string;
  index: number;
  evidence: TargetEvidence[];
}

/** An envelope awaiting its evidence: `settle` answers one item, `abandon` gives up on the ones left. */
interface Awaited {
  owner: string;
  settle: (index: number, evidence: TargetEvidence[]) => void;
  abandon: () => void;
}

/** One item of work on its way out, and who waits for its evidence (null: probe it yourself). */
interface Outgoing {
  item: ForwardedWork;
  answer: (evidence: TargetEvidence[] | null) => void;
}

export interface HostOwnerOptions {
  redis: Redis;
  keyPrefix: string;
  /** How long a host stays with a process that stopped probing it, ms. */
  ownershipMs: number;
  /** Longest wait for a forwarded probe's evidence before probing locally, ms. */
  replyTimeoutMs: number;
  /** Period of the liveness beat (which also drains the inbox and checks the owners waited on), ms. */
  heartbeatMs: number;
  /** A process whose beat is older than this is dead, ms. */
  aliveMs: number;
  /** Probes here; one evidence per target, in order. */
  probe: (work: DomainWork) => Promise<TargetEvidence[]>;
  subscriptions: Subscriptions;
}

// Forwarded probes an owner takes off its list per round trip.
const DRAIN_BATCH = 64;

// Takes the host when nobody holds it, or when its holder is one of the processes known dead (ARGV[3..]);
// refreshes it when we hold it; returns the holder.
const CLAIM = `
local owner = redis.call('GET', KEYS[1])
local take = not owner
if owner and owner ~= ARGV[1] then
  for i = 3, #ARGV do
    if owner == ARGV[i] then take = true end
  end
end
if take then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return owner`;

export function createHostOwner(opts: HostOwnerOptions) {
  const me = randomUUID();
  const key = (name: string): string => `${opts.keyPrefix}${name}`;
  // Envelopes sent and awaiting their evidence, by id.
  const pending = new Map<string, Awaited>();
  // Who owns a host, as last claimed or read, and until when that answer is used without asking Redis.
  const known = new Map<string, { owner: string; until: number }>();
  const claiming = new Map<string, Promise<string>>();
  // Owners found dead, until their claims would have expired by themselves: their claims are taken over.
  const dead = new Map<string, number>();
  let heartbeat: NodeJS.Timeout | null = null;
  let closed = false;

  // Work for one owner leaves as one envelope per event-loop turn (a job's domains reach `run` together), and
  // reports for one requester leave together too (an owner's probes of several requesters' work often end in the
  // same turn).
  const sendWork = perTurn<Outgoing>(send);
  const sendReports = perTurn<Report>(async (requester, reports) => {
    await opts.redis.publish(key(`mx-reply:${requester}`), JSON.stringify(reports));
  });

  /** Heartbeat and subscriptions, started with the first probe. */
  function start(): void {
    if (heartbeat || closed) return;
    // Each beat also looks for forwarded work whose wake-up message was lost (pub/sub delivers at most once).
    const beat = () => {
      opts.redis.set(key(`mx-alive:${me}`), '1', 'PX', opts.aliveMs).catch(() => {});
      void drain();
      void abandonDeadOwners();
      forgetExpiredOwners();
    };
    beat();
    heartbeat = setInterval(beat, opts.heartbeatMs);
    heartbeat.unref();
    opts.subscriptions.subscribe(key(`mx-work:${me}`), () => void drain());
    opts.subscriptions.subscribe(key(`mx-reply:${me}`), (message) => {
      for (const { id, index, evidence } of JSON.parse(message) as Report[])
        pending.get(id)?.settle(index, evidence);
    });
  }

  /**
   * Ends the waits on owners that stopped beating (killed, cut off from Redis): one EXISTS per owner waited on,
   * once per heartbeat, however many probes wait on it.
   */
  async function abandonDeadOwners(): Promise<void> {
    const owners = [...new Set([...pending.values()].map((p) => p.owner))];
    if (owners.length === 0) return;
    const pipeline = opts.redis.pipeline();
    for (const owner of owners) pipeline.exists(key(`mx-alive:${owner}`));
    const alive = await pipeline.exec().catch(() => null);
    owners.forEach((owner, k) => {
      if (alive?.[k]?.[1] !== 0) return;
      dead.set(owner, Date.now() + opts.ownershipMs);
      // Its hosts are asked for again (and so taken over) on their next probe.
      for (const [host, memo] of known) if (memo.owner === owner) known.delete(host);
      for (const p of [...pending.values()]) if (p.owner === owner) p.abandon();
    });
  }

  /** Drops remembered owners past their time, so a long-running process keeps only the hosts it probes lately. */
  function forgetExpiredOwners(): void {
    const now = Date.now();
    for (const [host, memo] of known) if (memo.until <= now) known.delete(host);
    for (const [owner, until] of dead) if (until <= now) dead.delete(owner);
  }

  /** Runs the requests other processes left for us, taking up to DRAIN_BATCH of them per round trip. */
  async function drain(): Promise<void> {
    for (;;) {
      const batch = await opts.redis.lpop(key(`mx-inbox:${me}`), DRAIN_BATCH).catch(() => null);
      if (!batch || batch.length === 0) return;
      for (const raw of batch) void serve(JSON.parse(raw) as Envelope);
      if (batch.length < DRAIN_BATCH) return;
    }
  }

  /** Runs each item of a forwarded envelope, reporting each as soon as it is done. */
  async function serve(envelope: Envelope): Promise<void> {
    await Promise.all(
      envelope.items.map(async ({ host, ...work }, index) => {
        try {
          await ownerOf(host); // keeps our hold on the host fresh
          const evidence = await opts.probe(work);
          await sendReports(envelope.from, { id: envelope.id, index, evidence });
        } catch {
          // The requester's wait ends with its heartbeat check or its timeout: it then probes by itself.
        }
      }),
    );
  }

  /**
   * Probes a domain whose first MX is `host`: here if this process owns (or takes) the host, else in the host's
   * owner.
   */
  async function run(host: string | undefined, work: DomainWork): Promise<TargetEvidence[]> {
    start();
    if (!host) return opts.probe(work);
    const owner = await ownerOf(host);
    if (owner === me || closed) return opts.probe(work);
    const forwarded = await forward(owner, host, work);
    if (forwarded) return forwarded;
    known.delete(host); // gone or too slow: ask Redis again next time
    return opts.probe(work);
  }

  /**
   * The host's owner, claiming it when nobody holds it. The answer is remembered for half the ownership time, so
   * a busy host costs one Redis call per half period rather than one per probe: an owner's claim still has half
   * its time left when it is renewed, and a stale answer about another owner only forwards a probe to a live
   * process that then runs it itself (a dead one is noticed by its heartbeat).
   */
  function ownerOf(host: string): Promise<string> {
    const memo = known.get(host);
    if (memo && memo.until > Date.now()) return Promise.resolve(memo.owner);
    // The domains of many jobs may ask about a host at once: one claim answers them all.
    let claim = claiming.get(host);
    if (!claim) {
      const claimed = opts.redis.eval(
        CLAIM,
        1,
        key(`mx-owner:${host}`),
        me,
        opts.ownershipMs,
        ...dead.keys(),
      );
      claim = (claimed as Promise<string>)
        .then((owner) => {
          known.set(host, { owner, until: Date.now() + opts.ownershipMs / 2 });
          return owner;
        })
        .finally(() => claiming.delete(host));
      claiming.set(host, claim);
    }
    return claim;
  }

  /** The owner's evidence, or null when it is gone or too slow (the caller then probes by itself). */
  function forward(owner: string, host: string, work: DomainWork): Promise<TargetEvidence[] | null> {
    return new Promise((answer) => void sendWork(owner, { item: { ...work, host }, answer }));
  }

  /** Sends one envelope; each item's waiter gets its evidence as it arrives, or null when no more will come. */
  async function send(owner: string, outgoing: Outgoing[]): Promise<void> {
    const id = randomUUID();
    const raw = JSON.stringify({ id, from: me, items: outgoing.map((o) => o.item) } satisfies Envelope);
    const answered = outgoing.map(() => false);
    let left = outgoing.length;
    let stopWaiting: () => void = () => {};
    const allAnswered = new Promise<void>((resolve) => (stopWaiting = resolve));
    pending.set(id, {
      owner,
      settle: (index, evidence) => {
        if (answered[index] !== false) return;
        answered[index] = true;
        outgoing[index]!.answer(evidence);
        if (--left === 0) stopWaiting();
      },
      abandon: () => stopWaiting(),
    });
    const timer = setTimeout(() => stopWaiting(), opts.replyTimeoutMs);
    try {
      if (!closed) {
        const inbox = key(`mx-inbox:${owner}`);
        await opts.redis
          .pipeline()
          .rpush(inbox, raw)
          .pexpire(inbox, opts.replyTimeoutMs)
          .publish(key(`mx-work:${owner}`), '')
          .exec();
        await allAnswered;
      }
      // Gone or too slow: take the envelope back unless the owner has already taken it.
      if (left > 0) await opts.redis.lrem(key(`mx-inbox:${owner}`), 1, raw);
    } catch {
      // Redis unreachable: the items left are probed here.
    } finally {
      clearTimeout(timer);
      pending.delete(id);
      outgoing.forEach((o, k) => answered[k] || o.answer(null));
    }
  }

  function close(): void {
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    for (const p of [...pending.values()]) p.abandon();
    void opts.redis.del(key(`mx-alive:${me}`)).catch(() => {});
  }

  return { run, close };
}

/**
 * Collects items per key during one turn of the event loop, then hands each key's items to `flush` at once. The
 * promise of every item settles with its key's flush.
 */
function perTurn<T>(
  flush: (key: string, items: T[]) => Promise<void>,
): (key: string, item: T) => Promise<void> {
  type Batch = { items: T[]; flushed: Promise<void> };
  let turn: Map<string, Batch> | null = null;
  return (key, item) => {
    if (!turn) {
      turn = new Map<string, Batch>();
      setImmediate(() => (turn = null));
    }
    let batch = turn.get(key);
    if (!batch) {
      const items: T[] = [];
      // Starts after this turn's synchronous work and microtasks, so later callers of the turn join `items`.
      const flushed = new Promise<void>((resolve) => setImmediate(resolve)).then(() => flush(key, items));
      batch = { items, flushed };
      turn.set(key, batch);
    }
    batch.items.push(item);
    return batch.flushed;
  };
}
