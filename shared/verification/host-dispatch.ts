import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { duplicateConnection, type RedisClient } from '../redis.js';
import { verifyHostsQueue } from '../queues/verify-hosts.js';
import { InvalidPayloadError, validatePayload } from '../queues/producer.js';
import type { DispatchTimers } from './dispatch-timers.js';
import { drainHost, wakeOne, type DrainDeps, type DrainReport } from './host-drainer.js';
import {
  createHostQueue,
  hostWakeChannel,
  type HostLane,
  type HostPush,
  type HostWorkItem,
} from './host-queue.js';
import { BLOCKING_CONNECTION, createReplyInbox, sendReplies, type HostReply } from './host-replies.js';
import type { ProbeTarget } from './smtp-probe.js';
import type { VerifierLogger } from './types.js';

/**
 * How a host's work reaches the one process probing it. A requester pushes its items to the host's pending work
 * (host-queue.ts) and, unless a host job has claimed the host (it is running or about to), adds the host's `drain`
 * job (verify-hosts) with deduplication keepLastIfActive: BullMQ keeps
 * at most one active and one waiting job per host, so the active job is the host's ownership, its lock (renewed
 * while the process lives) the failover, and stalled-job recovery the takeover of a killed drainer. The answers
 * come back on the requester's reply stream (host-replies.ts). A waiting requester adds the job again every
 * `reAddMs` (a no-op while one exists), so work whose job failed for good is picked up again.
 */

export interface HostDispatchOptions {
  /** The connection that the dispatch's own connections (blocking reads, BullMQ, pub/sub) are duplicated from. */
  redis: RedisClient;
  /**
   * The connection for the host work's scripts and the replies (default `redis`): auto-pipelined in the verifier, so
   * that what every lane and request of this process sends in one turn of the event loop leaves in one write.
   */
  commands?: RedisClient;
  keyPrefix: string;
  /** BullMQ prefix of the verify-hosts queue (the deployment's QUEUE_PREFIX). */
  queuePrefix: string;
  /** Each host's work lists in a slot of their own (Redis Cluster; host-queue.ts). */
  hostSlots?: boolean;
  timers: DispatchTimers;
  /** Host jobs this process drains at once; 0: it only requests (it probes nothing). */
  drainConcurrency: number;
  /** The engine's part of draining: sessions, cache reads, probes. */
  engine: Pick<DrainDeps, 'sessions' | 'cached' | 'probe' | 'lanes' | 'limits'>;
  logger?: VerifierLogger;
}

export interface HostRequest {
  /** Epoch ms after which the requester answers timeout itself; default `timers.replyTimeoutMs` from now. */
  answerBy?: number;
  lane: HostLane;
  maxAgeSec?: number;
  /** Each target's reply as it comes (null: none in time, or withdrawn), before `run` resolves; k indexes targets. */
  onReply?: (k: number, reply: HostReply | null) => void;
  /** Aborting withdraws the targets no drainer has taken yet (they are never probed); they answer null. */
  signal?: AbortSignal;
}

export interface HostDispatch {
  /** The host's answers for the targets of one domain, in order; null for a target not answered in time. */
  run(
    host: string,
    domain: string,
    targets: ProbeTarget[],
    request: HostRequest,
  ): Promise<(HostReply | null)[]>;
  close(): Promise<void>;
}

// The most a host job may stall (lock lost: a killed or frozen process) before BullMQ fails it: stalls are how
// drainers die, and the next attempt takes the dead one's items back, so a stall is not the job's fault.
const HOST_JOB_MAX_STALLS = 100;
// How long after a caller's own deadline its unanswered tickets are dropped (the caller has answered by then).
const EXPIRY_GRACE_MS = 1000;
// Checks (every reAddMs) a process's marker outlives: a process stalled longer than this pushes its work again.
const LOST_MARKER_CHECKS = 6;

/** A request waiting for a host's answers, and its items not answered yet. */
interface WaitingRun {
  host: string;
  lane: HostLane;
  pending: Set<HostWorkItem>;
}

export function createHostDispatch(opts: HostDispatchOptions): HostDispatch {
  const { timers } = opts;
  const workTtlMs = timers.replyTimeoutMs + timers.jobLockMs;
  const commands = opts.commands ?? opts.redis;
  const hostQueue = createHostQueue({
    redis: commands,
    keyPrefix: opts.keyPrefix,
    keyTtlMs: workTtlMs,
    hostSlots: opts.hostSlots ?? false,
    claimTtlMs: timers.jobLockMs,
  });
  const inbox = createReplyInbox(opts.redis, opts.keyPrefix);
  // Its own connection, so that BullMQ's scripts are not defined on opts.redis: ioredis copies every script of a
  // connection into each pipeline made on it, and pushes and replies make one per call.
  const queueConnection = duplicateConnection(opts.redis);
  queueConnection.on('error', () => {}); // the failing add reports it
  const queue = new Queue(verifyHostsQueue.name, {
    connection: queueConnection,
    prefix: opts.queuePrefix,
    defaultJobOptions: verifyHostsQueue.defaultJobOptions,
    // As the producers' queues (shared/queues/producer.ts): a version check that timed out would fail every add.
    skipVersionCheck: true,
  });
  queue.on('error', (err) => opts.logger?.warn({ err: err.message }, 'verify-hosts queue error'));
  const addJob = async (host: string): Promise<void> => {
    await queue.add('drain', { host }, { deduplication: { id: host, keepLastIfActive: true } });
  };

  // The job is added only when the push found no host job claiming the host (host-queue.ts).
  const push = async ({ host, lane, items }: HostPush): Promise<void> => {
    if (await hostQueue.push(host, lane, items)) await addJob(host);
  };

  const shutdown = new AbortController();
  // Every lingering lane of every host job listens to it: many listeners are the normal case, not a leak.
  setMaxListeners(0, shutdown.signal);
  // The requests this process waits on, with their items not answered yet. Every reAddMs their hosts' jobs are
  // added again (a no-op while one exists), once per host, and the marker is looked at (below).
  const waiting = new Set<WaitingRun>();
  const reAdd = setInterval(() => {
    for (const host of new Set([...waiting].map((w) => w.host)))
      addJob(host).catch((err: Error) =>
        opts.logger?.warn({ err: err.message, host }, 'host job not re-added'),
      );
    void pushAgainIfLost().catch((err: Error) =>
      opts.logger?.warn({ err: err.message }, 'could not check for lost host work'),
    );
  }, timers.reAddMs);
  reAdd.unref();

  // A key of this process's own, refreshed every reAddMs. Found missing, Redis lost its data (restarted without
  // persistence, or failed over to a replica that had not caught up) and with it the pending work of every request
  // waiting here: that work is pushed again, so the requests are answered instead of waiting for their deadlines.
  // (An item a drainer was probing then is answered twice; the second answer finds nobody waiting.)
  // Only a marker known to have been written says anything when missing: the first write may fail (a connection
  // without an offline queue, not ready yet), and is tried again at each check until it lands.
  const marker = `${opts.keyPrefix}dispatch-alive:${randomUUID()}`;
  const markerTtlMs = LOST_MARKER_CHECKS * timers.reAddMs;
  let markerWritten = false;
  const writeMarker = async (): Promise<void> => {
    await commands.set(marker, '1', 'PX', markerTtlMs);
    markerWritten = true;
  };
  void writeMarker().catch(() => {});
  async function pushAgainIfLost(): Promise<void> {
    if (!markerWritten) return writeMarker();
    if ((await commands.set(marker, '1', 'PX', markerTtlMs, 'XX')) === 'OK') return;
    await writeMarker();
    const now = Date.now();
    const again = [...waiting].flatMap(({ host, lane, pending }) => {
      const items = [...pending].filter((i) => i.answerBy > now);
      return items.length === 0 ? [] : [{ host, lane, items }];
    });
    if (again.length === 0) return;
    opts.logger?.warn({ requests: again.length }, 'Redis lost the host work; pushing it again');
    await Promise.all(again.map(push));
  }

  // The drainers' own connection: BullMQ's workers need maxRetriesPerRequest: null.
  const workerConnection =
    opts.drainConcurrency > 0 ? duplicateConnection(opts.redis, BLOCKING_CONNECTION) : null;
  workerConnection?.on('error', () => {}); // reconnects by itself; the worker reports what fails
  const worker = workerConnection
    ? new Worker(verifyHostsQueue.name, (job: Job) => drain(job), {
        connection: workerConnection,
        prefix: opts.queuePrefix,
        concurrency: opts.drainConcurrency,
        lockDuration: timers.jobLockMs,
        stalledInterval: timers.stalledIntervalMs,
        maxStalledCount: HOST_JOB_MAX_STALLS,
      })
    : null;
  worker?.on('error', (err) => opts.logger?.warn({ err: err.message }, 'verify-hosts worker error'));

  // Lingering host jobs wait for the next push to their host: one subscriber per verifier that drains.
  const pushListeners = new Map<string, Set<() => void>>();
  const subscriber = workerConnection ? duplicateConnection(opts.redis, BLOCKING_CONNECTION) : null;
  subscriber?.on('error', () => {}); // reconnects and resubscribes by itself; meanwhile lingers end by time
  // One lingering lane per announcement: a lane that finds more than its share waiting wakes another of its job
  // (host-drainer.ts), so a push of a few items costs one take, not one per lane.
  subscriber?.on('message', (_channel: string, host: string) => wakeOne(pushListeners.get(host)));
  void subscriber?.subscribe(hostWakeChannel(opts.keyPrefix)).catch(() => {});

  function nextPush(host: string): { promise: Promise<void>; cancel(): void } {
    let listener = (): void => {};
    const promise = new Promise<void>((resolve) => (listener = resolve));
    const listeners = pushListeners.get(host) ?? new Set();
    pushListeners.set(host, listeners.add(listener));
    return {
      promise,
      cancel() {
        listeners.delete(listener);
        if (listeners.size === 0 && pushListeners.get(host) === listeners) pushListeners.delete(host);
      },
    };
  }

  async function drain(job: Job): Promise<DrainReport> {
    try {
      validatePayload('verify-hosts', job.name, job.data);
    } catch (err) {
      if (err instanceof InvalidPayloadError) throw new UnrecoverableError(err.message);
      throw err;
    }
    const { host } = job.data as { host: string };
    const report = await drainHost(host, {
      ...opts.engine,
      queue: hostQueue,
      job: job.id!,
      // As often as BullMQ renews the job's lock: the ownership lapses as soon after a death as the lock does.
      renewMs: timers.jobLockMs / 2,
      lingerMs: timers.sessionLingerMs,
      // Requesters that died with the dead attempt are re-run by the same stalled-job check that freed this job.
      takeoverLingerMs: timers.jobLockMs,
      nextPush,
      send: (replies) => sendReplies(commands, replies, workTtlMs),
      signal: shutdown.signal,
    });
    if (report.ownedElsewhere) opts.logger?.debug({ host }, 'host owned by another live job');
    else if (report.restored > 0)
      opts.logger?.info({ host, ...report }, 'host drained, with the items of a dead attempt');
    else opts.logger?.debug({ host, ...report }, 'host drained');
    return report;
  }

  async function run(
    host: string,
    domain: string,
    targets: ProbeTarget[],
    request: HostRequest,
  ): Promise<(HostReply | null)[]> {
    const answerBy = request.answerBy ?? Date.now() + timers.replyTimeoutMs;
    const items: HostWorkItem[] = targets.map((t) => ({
      ticket: randomUUID(),
      replyTo: inbox.address,
      domain,
      address: t.address,
      smtputf8: t.smtputf8,
      answerBy,
      ...(request.maxAgeSec === undefined ? {} : { maxAgeSec: request.maxAgeSec }),
    }));
    const tickets = items.map((i) => i.ticket);
    const replies = inbox.expect(tickets);
    const run: WaitingRun = { host, lane: request.lane, pending: new Set(items) };
    const { onReply, signal } = request;
    replies.forEach(
      (reply, k) =>
        void reply.then((r) => {
          run.pending.delete(items[k]!);
          onReply?.(k, r);
        }),
    );
    const withdraw = (): void => {
      hostQueue
        .withdraw(host, items)
        .catch((err: Error) => opts.logger?.warn({ err: err.message, host }, 'items not withdrawn'))
        .finally(() => inbox.expire(tickets));
    };
    // A caller with a deadline of its own answers timeout at answerBy itself; this only lets go of the waiters.
    const expiry = setTimeout(
      () => inbox.expire(tickets),
      Math.max(0, answerBy - Date.now()) + (request.answerBy === undefined ? 0 : EXPIRY_GRACE_MS),
    );
    try {
      if (signal?.aborted) inbox.expire(tickets);
      else {
        await push({ host, lane: request.lane, items });
        signal?.addEventListener('abort', withdraw, { once: true });
        if (signal?.aborted) withdraw(); // aborted while pushing
        waiting.add(run);
      }
      return await Promise.all(replies);
    } catch (err) {
      inbox.expire(tickets);
      throw err;
    } finally {
      signal?.removeEventListener('abort', withdraw);
      clearTimeout(expiry);
      waiting.delete(run);
    }
  }

  return {
    run,
    async close() {
      // Running host jobs finish what they took and stop taking more; the requests still waiting get null.
      shutdown.abort();
      clearInterval(reAdd);
      await commands.del(marker).catch(() => {});
      await worker?.close();
      workerConnection?.disconnect();
      subscriber?.disconnect();
      await inbox.close();
      await queue.close();
      queueConnection.disconnect();
    },
  };
}
