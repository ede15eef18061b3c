import type { FastifyPluginAsync } from 'fastify';
import { errorBody } from './errors.js';

export type ReadinessChecks = Record<string, () => Promise<unknown>>;

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref();
    }),
  ]);
}

/** `/health`: the process is up. `/ready`: every dependency (PostgreSQL, Redis) answers, each within a deadline. */
export const healthRoutes: FastifyPluginAsync<{ checks: ReadinessChecks }> = async (app, { checks }) => {
  app.get('/health', { logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/ready', { logLevel: 'warn' }, async (request, reply) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), CHECK_TIMEOUT_MS);
          return [name, 'ok'] as const;
        } catch (err) {
          request.log.warn({ err, dependency: name }, 'readiness check failed');
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    const dependencies = Object.fromEntries(results);
    if (!ready) return reply.status(503).send({ ...errorBody(503, 'Not ready'), dependencies });
    return { status: 'ready', dependencies };
  });
};
