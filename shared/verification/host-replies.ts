import { randomUUID } from 'node:crypto';
import { duplicateConnection, type RedisClient } from '../redis.js';
import type { ProbeOutcome } from './smtp-probe.js';
import type { VerificationResult } from './types.js';

/**
 * Answers of the host drainers to the processes waiting for them. Each requesting process (each verifier) has one
 * Redis Stream, read by one blocking XREAD connection that settles the local waiters by ticket. A stream, not
 * pub/sub: an answer sent while the reader is between two reads is still there for the next one.
 */

/** What the drainer found for one item: the probe's evidence, or a verdict kept in the result cache. */
export type HostReply =
  | { kind: 'probed'; outcome: ProbeOutcome | null; catchAll: boolean | null }
  | { kind: 'cached'; result: VerificationResult };

export interface AddressedReply {
  replyTo: string;
  ticket: string;
  reply: HostReply;
}

// Entries a stream keeps (approximately): far more than the items one process waits for at once.
const STREAM_MAX_ENTRIES = 10_000;
// How long one blocking read waits before looking again whether the inbox was closed.
const READ_BLOCK_MS = 1000;
// How long past its block a read may stay unanswered before its connection is taken for dead and opened again: a
// Redis node gone without a word (no reset) would otherwise hold the read until TCP gives up, many minutes in which
// every reply to this process is lost.
const READ_STALL_MS = 5000;

/**
 * Sends replies, one stream entry per requester. Plain commands, not a pipeline of their own: on an auto-pipelined
 * connection (host-dispatch.ts) they leave in the same write as everything else issued in this turn of the event
 * loop, in the order issued.
 */
export async function sendReplies(
  redis: RedisClient,
  replies: readonly AddressedReply[],
  ttlMs: number,
): Promise<void> {
  if (replies.length === 0) return;
  const byRequester = new Map<string, [string, HostReply][]>();
  for (const r of replies) {
    const list = byRequester.get(r.replyTo);
    if (list) list.push([r.ticket, r.reply]);
    else byRequester.set(r.replyTo, [[r.ticket, r.reply]]);
  }
  const sent: Promise<unknown>[] = [];
  for (const [stream, entries] of byRequester) {
    sent.push(redis.xadd(stream, 'MAXLEN', '~', STREAM_MAX_ENTRIES, '*', 'r', JSON.stringify(entries)));
    sent.push(redis.pexpire(stream, ttlMs));
  }
  await Promise.all(sent);
}

export interface ReplyInbox {
  /** The stream the drainers answer to. */
  readonly address: string;
  /** Promises of the replies to these tickets, to be settled by `expire` if none comes. */
  expect(tickets: readonly string[]): Promise<HostReply | null>[];
  /** Settles the tickets still waiting with null (their deadline passed). */
  expire(tickets: readonly string[]): void;
  close(): Promise<void>;
}

export function createReplyInbox(redis: RedisClient, keyPrefix: string): ReplyInbox {
  const address = `${keyPrefix}replies:${randomUUID()}`;
  const waiters = new Map<string, (reply: HostReply | null) => void>();
  // Its own connection: XREAD BLOCK holds it.
  const reader = duplicateConnection(redis, BLOCKING_CONNECTION);
  reader.on('error', () => {}); // reconnects by itself; the read loop retries
  let closed = false;
  let lastId = '0';

  const loop = (async () => {
    while (!closed) {
      const stalled = setTimeout(() => reader.disconnect(true), READ_BLOCK_MS + READ_STALL_MS);
      try {
        const read = (await reader.xread(
          'COUNT',
          500,
          'BLOCK',
          READ_BLOCK_MS,
          'STREAMS',
          address,
          lastId,
        )) as [string, [string, string[]][]][] | null;
        for (const [, entries] of read ?? []) {
          for (const [id, fields] of entries) {
            lastId = id;
            const body = fields[fields.indexOf('r') + 1];
            if (!body) continue;
            for (const [ticket, reply] of JSON.parse(body) as [string, HostReply][]) {
              const settle = waiters.get(ticket);
              waiters.delete(ticket);
              settle?.(reply);
            }
          }
        }
      } catch {
        if (!closed) await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        clearTimeout(stalled);
      }
    }
  })();

  return {
    address,
    expect: (tickets) =>
      tickets.map((ticket) => new Promise<HostReply | null>((resolve) => waiters.set(ticket, resolve))),
    expire(tickets) {
      for (const ticket of tickets) {
        const settle = waiters.get(ticket);
        waiters.delete(ticket);
        settle?.(null);
      }
    },
    async close() {
      closed = true;
      reader.disconnect();
      await loop;
      for (const settle of waiters.values()) settle(null);
      waiters.clear();
      await redis.del(address).catch(() => {});
    },
  };
}

/**
 * Options of a connection that waits in blocking reads (XREAD BLOCK, BullMQ's worker): no command timeout (a
 * producer connection's would cut the wait), commands wait for a reconnect instead of failing.
 */
export const BLOCKING_CONNECTION = {
  maxRetriesPerRequest: null,
  commandTimeout: undefined,
  enableOfflineQueue: true,
} as const;
