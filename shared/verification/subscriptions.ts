import type { Redis } from 'ioredis';

/**
 * The verifier's one Redis subscriber connection, shared by the parts that listen to pub/sub channels (the MX
 * semaphore's released/wanted announcements, host ownership's work and reply channels). Opened by the first
 * subscription; ioredis subscribes again after a reconnection. Messages sent while it was down are lost: every
 * listener has a fallback (polling, heartbeats, timeouts).
 */
export interface Subscriptions {
  /** Calls `handler` with every message on `channel`. Does nothing once closed. */
  subscribe(channel: string, handler: (message: string) => void): void;
  close(): void;
}

export function createSubscriptions(redis: Redis): Subscriptions {
  const handlers = new Map<string, Set<(message: string) => void>>();
  let subscriber: Redis | null = null;
  let closed = false;

  return {
    subscribe(channel, handler) {
      if (closed) return;
      if (!subscriber) {
        subscriber = redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
        subscriber.on('error', () => {});
        subscriber.on('message', (from: string, message: string) => {
          for (const handle of handlers.get(from) ?? []) handle(message);
        });
      }
      const listening = handlers.get(channel);
      if (listening) return void listening.add(handler);
      handlers.set(channel, new Set([handler]));
      subscriber.subscribe(channel).catch(() => {});
    },
    close() {
      closed = true;
      handlers.clear();
      subscriber?.disconnect();
      subscriber = null;
    },
  };
}
