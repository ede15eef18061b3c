import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import { describeError, errorBody } from '../http/errors.js';
import { QUEUE_NAMES } from '../../shared/queues/names.js';
import type { AdminDeps } from './deps.js';

export const QUEUES_PATH = '/admin/queues';

// bull-board types the status as the few it answers itself (200, 400, 403…); ours are any 4xx or a 500.
type BoardAnswer = ReturnType<Parameters<FastifyAdapter['setErrorHandler']>[0]>;

/**
 * bull-board over every queue of the catalog, mounted inside the admin panel's authenticated scope, so its
 * page and its JSON API need the same session as the rest of the panel. Its actions (retry, clean, pause)
 * are PUT/POST with JSON bodies: the Strict session cookie and the Origin check keep other sites out.
 */
export async function queuesBoard(secured: FastifyInstance, deps: AdminDeps): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUES_PATH);
  createBullBoard({
    // The producers' Queue objects: bull-board reads and acts through the service's own Redis connection.
    queues: QUEUE_NAMES.map((name) => new BullMQAdapter(deps.queues.queue(name))),
    serverAdapter,
    options: {
      uiConfig: { boardTitle: 'Agora queues', miscLinks: [{ text: 'Back to admin', url: '/admin' }] },
    },
  });
  // bull-board's plugin sets its own error handler in its scope, which also catches what the service's hooks
  // throw there (a malformed Authorization header, a rate limit): `{error: {key}, message}`, with the real
  // message (and in development the stack) of a 5xx. Errors leave its routes as the one error body instead.
  serverAdapter.setErrorHandler((err: Error) => {
    const { code, message } = describeError(err);
    if (code >= 500) deps.logger.error({ err }, 'queue board request failed');
    return { status: code as BoardAnswer['status'], body: errorBody(code, message) };
  });
  await secured.register(serverAdapter.registerPlugin() as Parameters<FastifyInstance['register']>[0], {
    prefix: QUEUES_PATH,
  });
}
