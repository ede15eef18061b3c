import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';
import { onReplica, type ReadReplicas, type Replica } from '../../shared/db/replicas/index.js';
import { errorCodes, isDatabaseUnavailable } from '../../shared/db/unavailable.js';
import { databaseReads } from '../../shared/metrics.js';
import type { RedisClient } from '../../shared/redis.js';
import { recentWriters } from './recent-writers.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * This GET route may read from a replica. Defaults to `readCache`: a route fit for the read cache (public, no
     * side effect) is fit for a replica. A route with a side effect in PostgreSQL must never set it.
     */
    readReplica?: boolean;
  }
  interface FastifyRequest {
    /** The replica an opted-in request read from (its name), or 'primary'; null elsewhere. */
    readFrom: string | null;
  }
}

export interface ReadReplicaPluginOptions {
  replicas: ReadReplicas | undefined;
  redis: RedisClient;
  prefix: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What a failed replica read means: `down` (the replica cannot be reached or is shutting down: left out, read
 * again on the primary), `conflict` (40001: the replica cancelled the query to replay WAL that removes rows it
 * needed; read again on the primary, the replica stays), or undefined (the statement itself failed: the error
 * stands, as it would on the primary). A statement timeout is the query's own slowness, not the replica's.
 */
function replicaFailure(err: unknown): 'down' | 'conflict' | undefined {
  const codes = errorCodes(err);
  if (codes.includes('40001')) return 'conflict';
  if (codes.includes('57014')) return undefined;
  return isDatabaseUnavailable(err) ? 'down' : undefined;
}

/**
 * Sends the reads of opted-in GET routes to a read replica (shared/db/replicas) and everything else to the
 * primary. A request goes to the primary when no replica is in use, or when its API key wrote within the
 * read-your-writes window (recent-writers.ts), so a client always reads its own writes. A read that meets a replica
 * going away is answered from the primary (never a 5xx for that), and the replica is left out until its health
 * check passes again. Without replicas configured the plugin adds nothing.
 *
 * Register after the auth plugin (a handler's request knows its key) and before the routes (their handlers are
 * wrapped as they are added).
 */
export const readReplicaPlugin = fp<ReadReplicaPluginOptions>(
  async (app: FastifyInstance, { replicas, redis, prefix }) => {
    if (!replicas) return;
    const writers = recentWriters(redis, prefix, replicas.readYourWritesMs);
    app.decorateRequest('readFrom', null);

    const chooseReplica = async (request: FastifyRequest): Promise<[Replica | undefined, string]> => {
      const replica = replicas.pick();
      if (!replica) return [undefined, 'no_replica'];
      if (request.principal && (await writers.mayHaveWritten(request.principal.keyId)))
        return [undefined, 'wrote_recently'];
      return [replica, 'public'];
    };

    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat();
      if (!methods.every((method) => method === 'GET' || method === 'HEAD')) return;
      // A per-request readCache (a function) opts the whole route in: say readReplica where that is not right.
      if (!(route.config?.readReplica ?? route.config?.readCache)) return;
      const handler = route.handler as (
        this: FastifyInstance,
        request: FastifyRequest,
        reply: FastifyReply,
      ) => unknown;
      route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        const [replica, reason] = await chooseReplica(request);
        if (!replica) {
          request.readFrom = 'primary';
          databaseReads.inc({ target: 'primary', reason });
          return handler.call(this, request, reply);
        }
        request.readFrom = replica.name;
        try {
          const answer = await onReplica(replica.db, () => handler.call(this, request, reply));
          databaseReads.inc({ target: 'replica', reason });
          return answer;
        } catch (err) {
          const failure = replicaFailure(err);
          if (!failure || reply.sent) throw err;
          if (failure === 'down') replicas.leaveOut(replica, (err as Error).message);
          request.log.warn(
            { replica: replica.name, err: (err as Error).message },
            'read replica failed; reading from the primary',
          );
          request.readFrom = 'primary';
          databaseReads.inc({ target: 'primary', reason: `replica_${failure}` });
          return handler.call(this, request, reply);
        }
      } as RouteHandlerMethod;
    });

    // A write notes its key once it reached its handler, before its answer leaves: the client's next read, on
    // whichever process, then goes to the primary. A failed note is logged; reads stay correct while Redis is away
    // (mayHaveWritten says true), and only a note lost while Redis answered reads could send one to a replica.
    const writes = new WeakSet<FastifyRequest>();
    app.addHook('preHandler', async (request) => {
      if (!SAFE_METHODS.has(request.method) && request.principal) writes.add(request);
    });
    app.addHook('onSend', async (request, _reply, payload) => {
      if (!writes.has(request) || !request.principal) return payload;
      await writers
        .wrote(request.principal.keyId)
        .catch((err: Error) =>
          request.log.warn({ err: err.message }, 'write not noted for read-your-writes'),
        );
      return payload;
    });
  },
  { name: 'agora-read-replicas', dependencies: ['agora-auth'] },
);

/** `/ready` checks of the replicas: optional (the service reads from the primary without them), by name. */
export function replicaReadiness(replicas: ReadReplicas | undefined): Record<string, () => Promise<void>> {
  if (!replicas) return {};
  return Object.fromEntries(
    replicas.states().map(({ name }) => [
      `replica ${name}`,
      async () => {
        const state = replicas.states().find((s) => s.name === name);
        if (!state?.inUse) throw new Error(state?.reason ?? 'left out');
      },
    ]),
  );
}
