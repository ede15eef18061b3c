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
    // bull-board decodes query values a second time: a literal % (already decoded once) is a URIError.
    if (err instanceof URIError) return { status: 400, body: errorBody(400, 'Malformed URL') };
    const { code, message } = describeError(err);
    if (code >= 500) deps.logger.error({ err }, 'queue board request failed');
    return { status: code as BoardAnswer['status'], body: errorBody(code, message) };
  });
  await secured.register(async (board) => {
    board.addHook('onSend', async (_request, reply, payload) => asErrorBody(reply.statusCode, payload));
    await board.register(serverAdapter.registerPlugin() as Parameters<FastifyInstance['register']>[0], {
      prefix: QUEUES_PATH,
    });
  });
}

/**
 * bull-board answers some refusals itself, in its own shape (`{"error":{"key":"ERRORS.QUEUE_NOT_FOUND"}}`), rather
 * than throwing them to the error handler above: those become the one error body too, their key in plain words.
 */
function asErrorBody(status: number, payload: unknown): unknown {
  if (status < 400 || typeof payload !== 'string') return payload;
  let body: { error?: unknown };
  try {
    body = JSON.parse(payload) as { error?: unknown };
  } catch {
    return payload;
  }
  if (typeof body?.error !== 'object' || body.error === null) return payload;
  const { key, options } = body.error as { key?: unknown; options?: { field?: unknown } };
  const words =
    typeof key === 'string'
      ? key
          .replace(/^ERRORS\./, '')
          .replace(/_/g, ' ')
          .toLowerCase()
      : '';
  const field = typeof options?.field === 'string' ? `: ${options.field}` : '';
  const message = words ? `${words.charAt(0).toUpperCase()}${words.slice(1)}${field}` : 'Request refused';
  return JSON.stringify(errorBody(status, message));
}
