import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import type { Database } from '../../shared/db/client.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Serve this GET route's 200 answers from the in-process read cache. Only for a route whose body depends on
     * the URL alone (never on the caller, a cookie or a header) and whose handler has no side effect. A function
     * opts in per request (from its path parameters, available before the handler), for a route whose handler has
     * a side effect in one form only: `/questions/{id}` counts a view for one question, not for a vector of ids.
     */
    readCache?: boolean | ((request: FastifyRequest) => boolean);
  }
  interface FastifyRequest {
    /** Set by the read cache on opted-in routes: the generation the request started in, and whether it hit. */
    readCache: { generation: number; hit: boolean } | null;
  }
}

/** The PostgreSQL channel migration 0004 notifies on every change to a table that a cached read shows. */
export const CHANGES_CHANNEL = 'agora_changes';

export interface ReadCacheOptions {
  database: Pick<Database, 'listen'>;
  /** Longest life of an entry; 0 turns the cache off (the plugin then adds nothing). */
  ttlMs: number;
  maxBytes: number;
  /** Longest life of an answer read from a replica (request.readFrom, read-replicas.ts); absent: ttlMs. */
  replicaEntryTtlMs?: number;
}

interface Entry {
  // The serialised string itself: a small Buffer made from it would be a slice of Node's shared 8 KiB pool and
  // keep the whole slab alive, so the cache could hold ~10× its byte budget.
  body: string | Buffer;
  contentType: string;
}

// Bookkeeping per entry beyond its key and body, so that many tiny entries still count against maxBytes.
const ENTRY_OVERHEAD_BYTES = 128;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A Buffer of its own (not a view into a larger pooled slab that the cache would keep alive). */
function copyOutOfPool(payload: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(payload.length);
  payload.copy(copy);
  return copy;
}

/**
 * An in-process LRU of serialised 200 answers of opted-in GET routes, keyed by the URL as sent (path and query
 * string). GET and HEAD share entries: Fastify answers HEAD with the GET handler and drops the body last.
 *
 * Correctness rests on one generation counter; bumping it empties the cache:
 * - every non-GET request this process serves bumps it in onSend, before its client gets the answer, so a client
 *   reads its own writes from the same process at once;
 * - every NOTIFY on agora_changes bumps it (statement triggers of migration 0004, sent at commit, so another
 *   process's or a worker's write shows here within the notification's delivery time);
 * - so does every (re)LISTEN, since notifications sent while the connection was down are lost. Until the first
 *   LISTEN is in place the cache is bypassed; the TTL bounds staleness if the LISTEN connection drops unnoticed.
 * A response is stored only if the generation did not move while it was computed: a response read from rows
 * that a concurrent write has since changed must not outlive the invalidation.
 *
 * Register after the auth and rate-limit plugins: a hit is still authenticated (a bad key is a 401) and still
 * counted (same X-RateLimit-* headers, same 429s), and the ETag plugin's onSend still tags the hit's body (304s).
 */
export const readCachePlugin = fp<ReadCacheOptions>(
  async (app: FastifyInstance, { database, ttlMs, maxBytes, replicaEntryTtlMs }) => {
    if (ttlMs <= 0) return;
    app.decorateRequest('readCache', null);

    const cache = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      ttl: ttlMs,
      sizeCalculation: (entry, key) => Buffer.byteLength(entry.body) + key.length + ENTRY_OVERHEAD_BYTES,
    });
    let generation = 0;
    let listening = false;
    let closed = false;
    const invalidate = () => {
      generation += 1;
      cache.clear();
    };

    let unlisten: (() => Promise<void>) | undefined;
    try {
      unlisten = await database.listen(CHANGES_CHANNEL, invalidate, () => {
        listening = !closed;
        invalidate();
      });
    } catch (err) {
      // The driver keeps retrying the LISTEN; the cache stays bypassed until it is in place.
      app.log.warn({ err: (err as Error).message }, 'read cache: LISTEN failed, serving uncached');
    }
    app.addHook('onClose', async () => {
      closed = true;
      listening = false;
      cache.clear();
      // Not awaited: with PostgreSQL unreachable the UNLISTEN would hold shutdown until the connect timeout, and
      // closing the database's connections ends the LISTEN anyway.
      void unlisten?.().catch(() => {});
    });

    const optedIn = (request: FastifyRequest) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const readCache = request.routeOptions.config?.readCache;
      return readCache === true || (typeof readCache === 'function' && readCache(request));
    };

    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!optedIn(request)) return;
      request.readCache = { generation, hit: false };
      const entry = listening ? cache.get(request.url) : undefined;
      if (!entry) {
        reply.header('x-cache', 'miss');
        return;
      }
      request.readCache.hit = true;
      reply.header('x-cache', 'hit').type(entry.contentType);
      return reply.send(entry.body);
    });

    // A write empties the cache once it reached its handler (authenticated, within its budget, valid), whatever
    // its outcome: a request refused before that changed nothing, and must not let a client wipe the cache at will.
    const writes = new WeakSet<FastifyRequest>();
    app.addHook('preHandler', async (request) => {
      if (!SAFE_METHODS.has(request.method) && !request.is404) writes.add(request);
    });

    app.addHook('onSend', async (request, reply, payload) => {
      if (writes.has(request)) {
        invalidate();
        return payload;
      }
      const state = request.readCache;
      if (!state || state.hit || !listening || state.generation !== generation) return payload;
      if (reply.statusCode !== 200 || reply.hasHeader('set-cookie')) return payload;
      if (!(typeof payload === 'string' || Buffer.isBuffer(payload))) return payload;
      const contentType = reply.getHeader('content-type');
      const fromReplica = request.readFrom != null && request.readFrom !== 'primary';
      cache.set(
        request.url,
        {
          body: typeof payload === 'string' ? payload : copyOutOfPool(payload),
          contentType: typeof contentType === 'string' ? contentType : 'application/json; charset=utf-8',
        },
        fromReplica && replicaEntryTtlMs !== undefined
          ? { ttl: Math.min(ttlMs, replicaEntryTtlMs) }
          : undefined,
      );
      return payload;
    });
  },
  { name: 'agora-read-cache', dependencies: ['agora-auth', 'agora-rate-limit'] },
);
