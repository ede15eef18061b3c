import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { ErrorCode, Job, type Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { describeError, errorBody } from '../http/errors.js';
import { ValidationError } from '../../shared/errors.js';
import { QUEUE_NAMES, type QueueName } from '../../shared/queues/names.js';
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
    // BullMQ refuses an action on a job in the wrong state (promote a job that is not delayed, retry one that has
    // not failed, a locked or vanished job) with an error carrying its negative ErrorCode: a conflict with the
    // job's state (or a 404 for a job gone meanwhile), not a failure of the service.
    const bullCode = (err as { code?: unknown }).code;
    if (typeof bullCode === 'number' && bullCode < 0 && ErrorCode[bullCode] !== undefined) {
      const gone = bullCode === ErrorCode.JobNotExist || bullCode === ErrorCode.ParentJobNotExist;
      const status = gone ? 404 : 409;
      return { status: status as BoardAnswer['status'], body: errorBody(status, err.message) };
    }
    const { code, message } = describeError(err);
    if (code >= 500) deps.logger.error({ err }, 'queue board request failed');
    return { status: code as BoardAnswer['status'], body: errorBody(code, message) };
  });
  await secured.register(async (board) => {
    board.addHook('onSend', async (_request, reply, payload) => asErrorBody(reply.statusCode, payload));
    board.addHook('preHandler', async (request) => checkBoardInput(request, deps));
    await board.register(serverAdapter.registerPlugin() as Parameters<FastifyInstance['register']>[0], {
      prefix: QUEUES_PATH,
    });
  });
}

/**
 * What bull-board passes on to BullMQ unchecked, refused with a 400 before its handlers run:
 * - the job list's `page` and `jobsPerPage` (bull-board takes any integer from 1; past 2^53 or multiplied past
 *   Redis's 64-bit range they made a Redis error, a 500);
 * - the options of a job added from the board: their types (JOB_OPTION_TYPES), then what BullMQ checks only as it
 *   adds the job and refuses with plain errors (a custom id that is an integer or holds ':', a priority past
 *   2^21 - 1, options used together…): BullMQ's own check runs first here, so its message comes back as a 400.
 */
const BOARD_PAGING = { page: 1_000_000, jobsPerPage: 1000 } as const;

function checkBoardInput(request: FastifyRequest, deps: AdminDeps): void {
  const route = request.routeOptions.url ?? '';
  if (route === `${QUEUES_PATH}/api/queues`) {
    const query = request.query as Record<string, unknown>;
    for (const [name, max] of Object.entries(BOARD_PAGING)) {
      const value = query[name];
      if (value === undefined) continue;
      const n = typeof value === 'string' && /^[0-9]{1,7}$/.test(value) ? Number(value) : NaN;
      if (!(n >= 1 && n <= max)) throw new ValidationError(`${name} must be an integer from 1 to ${max}`);
    }
  }
  if (route === `${QUEUES_PATH}/api/queues/:queueName/add` && request.method === 'POST') {
    const name = (request.params as { queueName?: string }).queueName ?? '';
    if (!(QUEUE_NAMES as readonly string[]).includes(name)) return; // bull-board answers 404
    const body = (request.body ?? {}) as { name?: unknown; data?: unknown; options?: unknown };
    const problem = JobOptionsCheck.problem(
      deps.queues.queue(name as QueueName),
      body.name,
      body.data,
      body.options,
    );
    if (problem) throw new ValidationError(`Invalid job options: ${problem}`);
  }
}

const count = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const flag = (v: unknown) => typeof v === 'boolean';
const text = (v: unknown) => typeof v === 'string' && v.length > 0;
const objectOf =
  (fields: Record<string, (v: unknown) => boolean>, required: string[] = []) =>
  (v: unknown) =>
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    required.every((k) => k in v) &&
    Object.entries(v).every(([k, inner]) => Object.hasOwn(fields, k) && fields[k]!(inner));
const keepJobs = (v: unknown) => flag(v) || count(v) || objectOf({ age: count, count, limit: count })(v);
const scalar = (v: unknown) =>
  typeof v === 'string' || flag(v) || (typeof v === 'number' && Number.isFinite(v));

/**
 * The types of the job options the board may send (BullMQ's JobsOptions). BullMQ stores what it is given: a
 * string delay or attempts reached its Lua scripts (a Redis error, a 500) or broke the job for the worker that took
 * it. An option not listed here is refused rather than passed on unchecked.
 */
const JOB_OPTION_TYPES: Record<string, (v: unknown) => boolean> = {
  jobId: text,
  timestamp: count,
  delay: count,
  attempts: count,
  priority: count,
  keepLogs: count,
  stackTraceLimit: count,
  sizeLimit: count,
  lifo: flag,
  failParentOnFailure: flag,
  continueParentOnFailure: flag,
  ignoreDependencyOnFailure: flag,
  removeDependencyOnFailure: flag,
  removeOnComplete: keepJobs,
  removeOnFail: keepJobs,
  backoff: (v) =>
    count(v) ||
    objectOf({ type: text, delay: count, jitter: (j) => typeof j === 'number' && j >= 0 && j <= 1 }, [
      'type',
    ])(v),
  repeat: (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every(scalar),
  deduplication: objectOf({ id: text, ttl: count, extend: flag, replace: flag }, ['id']),
  parent: objectOf({ id: text, queue: text }, ['id', 'queue']),
};

function jobOptionsTypeProblem(options: object): string | undefined {
  for (const [name, value] of Object.entries(options)) {
    const check = Object.hasOwn(JOB_OPTION_TYPES, name) ? JOB_OPTION_TYPES[name] : undefined;
    if (!check) return `unknown option "${name.slice(0, 32)}"`;
    if (!check(value)) return `${name} has the wrong type or is out of range`;
  }
  return undefined;
}

/** BullMQ's own validation of a job's options, run without adding the job. */
class JobOptionsCheck extends Job {
  static problem(queue: Queue, name: unknown, data: unknown, options: unknown): string | undefined {
    if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))
      return undefined; // bull-board's own schema refuses it
    const typeProblem = jobOptionsTypeProblem((options ?? {}) as object);
    if (typeProblem) return typeProblem;
    try {
      const opts = { ...queue.defaultJobOptions, ...(options as object) };
      const job = new JobOptionsCheck(queue, typeof name === 'string' ? name : '', data, opts, opts.jobId);
      job.validateOptions(job.asJSON());
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
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
