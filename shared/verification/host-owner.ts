import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { MailHost } from './dns.js';
import type { Subscriptions } from './subscriptions.js';
import type { ProbeOutcome, ProbeReport, ProbeTarget } from './smtp-probe.js';

/**
 * One process at a time probes a given MX host; the others forward their probes of it there. Connections are
 * pooled per process, so without this a host's addresses, spread over N worker processes, would need N
 * connections taking turns for the host's few slots, each carrying one or two RCPTs.
 *
 * - Ownership: `mx-owner:<host>` holds the id of the process probing the host, with a short TTL that every probe
 *   it runs refreshes. A process that finds no owner takes the host.
 * - Forwarding: the probe goes on the owner's list `mx-inbox:<owner>` and a message on `mx-work` wakes it; the
 *   owner runs it as one of its own and publishes the report on `mx-reply:<requester>`.
 * - Failure: every process keeps `mx-alive:<id>` alive with a heartbeat. A requester whose owner stopped beating
 *   (killed, lost Redis) takes its request back and probes the host itself, as it does when no answer came within
 *   the probe deadline. Probing twice is harmless: RCPT changes nothing on the server.
 */

export interface ProbeRequest {
  hosts: MailHost[];
  targets: ProbeTarget[];
  catchAllAddress: string | null;
}

interface Envelope extends ProbeRequest {
  id: string;
  from: string;
}

interface WireReport {
  outcomes: [string, ProbeOutcome][];
  catchAllProbe: ProbeOutcome | null;
  sessions: number;
}

export interface HostOwnerOptions {
  redis: Redis;
  keyPrefix: string;
  /** How long a host stays with a process that stopped probing it, ms. */
  ownershipMs: number;
  /** Longest wait for a forwarded probe's report before probing locally, ms. */
  replyTimeoutMs: number;
  /** Runs a probe here. */
  probe: (request: ProbeRequest) => Promise<ProbeReport>;
  subscriptions: Subscriptions;
}

const HEARTBEAT_MS = 1000;
const ALIVE_MS = 3 * HEARTBEAT_MS;

// Takes the host when nobody holds it, refreshes it when we do; returns the holder.
const CLAIM = `
local owner = redis.call('GET', KEYS[1])
if not owner then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return owner`;

export function createHostOwner(opts: HostOwnerOptions) {
  const me = randomUUID();
  const key = (name: string): string => `${opts.keyPrefix}${name}`;
  const pending = new Map<string, (report: WireReport) => void>();
  let heartbeat: NodeJS.Timeout | null = null;
  let closed = false;

  /** Heartbeat and subscriptions, started with the first probe. */
  function start(): void {
    if (heartbeat || closed) return;
    const beat = () => void opts.redis.set(key(`mx-alive:${me}`), '1', 'PX', ALIVE_MS).catch(() => {});
    beat();
    heartbeat = setInterval(beat, HEARTBEAT_MS);
    heartbeat.unref();
    opts.subscriptions.subscribe(key('mx-work'), (owner) => {
      if (owner === me) void drain();
    });
    opts.subscriptions.subscribe(key(`mx-reply:${me}`), (message) => {
      const { id, report } = JSON.parse(message) as { id: string; report: WireReport };
      pending.get(id)?.(report);
    });
  }

  /** Runs the requests other processes left for us. */
  async function drain(): Promise<void> {
    for (;;) {
      const raw = await opts.redis.lpop(key(`mx-inbox:${me}`)).catch(() => null);
      if (raw === null) return;
      const envelope = JSON.parse(raw) as Envelope;
      void serve(envelope);
    }
  }

  async function serve(envelope: Envelope): Promise<void> {
    try {
      const first = envelope.hosts[0]?.host;
      if (first) await opts.redis.eval(CLAIM, 1, key(`mx-owner:${first}`), me, opts.ownershipMs);
      const report = await opts.probe(envelope);
      const wire: WireReport = { ...report, outcomes: [...report.outcomes] };
      await opts.redis.publish(
        key(`mx-reply:${envelope.from}`),
        JSON.stringify({ id: envelope.id, report: wire }),
      );
    } catch {
      // The requester's wait ends with its heartbeat check or its timeout: it then probes by itself.
    }
  }

  /** The probe's report: run here if this process owns (or takes) the host, else by the host's owner. */
  async function run(request: ProbeRequest): Promise<ProbeReport> {
    start();
    const first = request.hosts[0]?.host;
    if (!first) return opts.probe(request);
    const owner = (await opts.redis.eval(CLAIM, 1, key(`mx-owner:${first}`), me, opts.ownershipMs)) as string;
    if (owner === me || closed) return opts.probe(request);
    const forwarded = await forward(owner, request);
    return forwarded ?? opts.probe(request);
  }

  /** The owner's report, or null when it is gone or too slow (the caller then probes by itself). */
  async function forward(owner: string, request: ProbeRequest): Promise<ProbeReport | null> {
    const envelope: Envelope = { ...request, id: randomUUID(), from: me };
    const raw = JSON.stringify(envelope);
    const inbox = key(`mx-inbox:${owner}`);
    const reply = new Promise<WireReport>((resolve) => pending.set(envelope.id, resolve));
    try {
      await opts.redis
        .pipeline()
        .rpush(inbox, raw)
        .pexpire(inbox, opts.replyTimeoutMs)
        .publish(key('mx-work'), owner)
        .exec();
      const deadline = Date.now() + opts.replyTimeoutMs;
      while (Date.now() < deadline && !closed) {
        const report = await Promise.race([reply, sleep(Math.min(HEARTBEAT_MS, deadline - Date.now()))]);
        if (report) return { ...report, outcomes: new Map(report.outcomes) };
        if ((await opts.redis.exists(key(`mx-alive:${owner}`))) === 0) break;
      }
      await opts.redis.lrem(inbox, 1, raw);
      return null;
    } catch {
      return null;
    } finally {
      pending.delete(envelope.id);
    }
  }

  function close(): void {
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    void opts.redis.del(key(`mx-alive:${me}`)).catch(() => {});
  }

  return { run, close };
}

function sleep(ms: number): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), Math.max(0, ms)).unref());
}
