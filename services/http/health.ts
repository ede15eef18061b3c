import type { FastifyPluginAsync } from 'fastify';
import { dependencyUp } from '../../shared/metrics.js';
import { errorBody } from './errors.js';

export type ReadinessCheck = () => Promise<unknown>;

/**
 * What a service checks on `/ready`: `required` are the dependencies it cannot serve without (one of them down:
 * 503, the load balancer takes the instance out); `optional` are those it serves without, in a reduced way (one
 * of them down: 200 with `status: "degraded"`). Taking every instance out of rotation for a dependency they can
 * all do without would turn a blip of that dependency into a full outage.
 */
export interface Readiness {
  service: string;
  required: Record<string, ReadinessCheck>;
  optional?: Record<string, ReadinessCheck>;
  /**
   * Facts about how the service runs, added to a ready (or degraded) answer's body under their names, e.g. the Q&A
   * service's `search_index`. One that fails or times out is reported as null: it does not decide readiness.
   */
  report?: Record<string, () => Promise<unknown>>;
}

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * `/health`: the process is up. `/ready`: every required dependency answers, each within a deadline; the body
 * names the state of each (`ok` | `unavailable`) and `agora_dependency_up` mirrors it.
 */
export const healthRoutes: FastifyPluginAsync<Readiness> = async (app, readiness) => {
  const checks = [
    ...Object.entries(readiness.required).map(([name, check]) => ({ name, check, required: true })),
    ...Object.entries(readiness.optional ?? {}).map(([name, check]) => ({ name, check, required: false })),
  ];

  app.get('/health', { logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/ready', { logLevel: 'warn' }, async (request, reply) => {
    const results = await Promise.all(
      checks.map(async ({ name, check, required }) => {
        let up = true;
        try {
          await withTimeout(check(), CHECK_TIMEOUT_MS);
        } catch (err) {
          up = false;
          request.log.warn({ err, dependency: name, required }, 'readiness check failed');
        }
        dependencyUp.set(
          { service: readiness.service, dependency: name, required: String(required) },
          up ? 1 : 0,
        );
        return { name, required, up };
      }),
    );
    const dependencies = Object.fromEntries(results.map((r) => [r.name, r.up ? 'ok' : 'unavailable']));
    if (results.some((r) => r.required && !r.up))
      return reply.status(503).send({ ...errorBody(503, 'Not ready'), dependencies });
    const status = results.every((r) => r.up) ? 'ready' : 'degraded';
    const facts = await Promise.all(
      Object.entries(readiness.report ?? {}).map(async ([name, read]) => {
        try {
          return [name, await withTimeout(read(), CHECK_TIMEOUT_MS)] as const;
        } catch (err) {
          request.log.warn({ err, fact: name }, 'readiness report failed');
          return [name, null] as const;
        }
      }),
    );
    return { status, dependencies, ...Object.fromEntries(facts) };
  });
};

/**
 * Each service's dependencies, by whether it can serve without them (docs/operations.md, "Readiness"):
 * - qa: PostgreSQL holds the data; Redis carries rate-limit counters (counted per process meanwhile), caches
 *   and the jobs some routes enqueue, so reads go on without it.
 * - verify: every verification is a job on a Redis queue and every key is checked in PostgreSQL.
 */
export function serviceReadiness(
  service: 'qa' | 'verify',
  checks: { postgres: ReadinessCheck; redis: ReadinessCheck },
): Readiness {
  return service === 'qa'
    ? { service, required: { postgres: checks.postgres }, optional: { redis: checks.redis } }
    : { service, required: { postgres: checks.postgres, redis: checks.redis } };
}
