import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { paginate } from '../../../shared/db/repositories/pagination.js';
import {
  deleteList,
  findList,
  pageOfLists,
  resultsPage,
  type ListRecord,
} from '../../../shared/db/repositories/verification-lists.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import { createListBudget } from '../../../shared/lists/budget.js';
import { checkListCallbackUrl } from '../../../shared/lists/callback.js';
import {
  createList,
  ListChargeRefusedError,
  ListTooLargeError,
  type ListEntry,
} from '../../../shared/lists/create.js';
import { endList } from '../../../shared/lists/end.js';
import { LIST_ID_PATTERN } from '../../../shared/lists/ids.js';
import { viewOf } from '../../../shared/lists/view.js';
import { requireScope } from '../../http/auth.js';
import { rateLimitHeaders } from '../../http/rate-limit.js';
import { buildValidator } from '../../http/validation.js';
import type { VerifyDeps } from '../deps.js';
import { ErrorResponse } from '../schemas.js';
import { csvStream, ndjsonStream, orderedResult } from './output.js';
import {
  checkJsonListBody,
  CreateListBody,
  CreateQuery,
  ListParams,
  ListResponse,
  ListsPageResponse,
  PageQuery,
  parseStatusFilter,
  ResultsQuery,
  ResultsResponse,
} from './schemas.js';
import { createUploadSlots } from './upload-slots.js';
import { parseUpload } from './upload.js';

const ENDED = new Set(['completed', 'cancelled', 'failed']);

/**
 * Asynchronous verification lists (docs/verification.md, "Lists"): POST /lists stores a list (JSON or a streamed
 * CSV / text upload) and charges its distinct addresses; the verify-lists workers probe it; GET /lists/{id} shows
 * progress, /results what is done so far; DELETE cancels or deletes. A list of another owner is a 404.
 */
export const listRoutes: FastifyPluginAsyncTypebox<{ deps: VerifyDeps }> = async (app, { deps }) => {
  const limits = deps.config.verifyLists;
  const log = deps.logger.child({ component: 'verify-lists' });
  const budget = createListBudget(deps.redis, deps.config);
  const uploadSlots = createUploadSlots();
  const endDeps = { database: deps.database, queues: deps.queues, budget, logger: log };
  const guard = requireScope('verify');
  const errors = { '4xx': ErrorResponse, '5xx': ErrorResponse };
  const queryValidator = buildValidator({});

  // Uploads reach the route as the raw request stream (this plugin's routes only): the service's BODY_LIMIT_BYTES
  // does not apply, VERIFY_LIST_MAX_BYTES is counted while the stream is read.
  app.removeContentTypeParser(['text/plain']);
  app.addContentTypeParser(['text/csv', 'text/plain'], (_request, payload, done) => done(null, payload));

  const owned = async (request: FastifyRequest, id: string): Promise<ListRecord> => {
    const list = LIST_ID_PATTERN.test(id)
      ? await findList(deps.database.db, id, request.principal!.userId)
      : undefined;
    if (!list) throw new NotFoundError('List not found');
    return list;
  };

  app.post(
    '/lists',
    {
      schema: {
        tags: ['lists'],
        summary: 'Create a verification list',
        description:
          `Up to ${limits.maxAddresses} addresses and ${limits.maxBytes} bytes, as JSON or as a text/csv or text/plain ` +
          'upload (streamed). Answers 202 with Location: /lists/{id}; the workers verify it asynchronously. Each ' +
          'distinct address costs one point of the key’s budget, charged now: a list that does not fit what is left ' +
          'is a 429 (Retry-After), one with more distinct addresses than the whole hourly budget a 413 (split it). ' +
          'An Idempotency-Key header makes a ' +
          'retried creation return the same list; the same key with another list or other settings is a 422.',
        querystring: CreateQuery,
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              description:
                'At most 200 characters. A retry with the same key and the same list returns the first list; ' +
                'another list or other settings under it is a 422',
            }),
          ),
        }),
        consumes: ['application/json', 'text/csv', 'text/plain'],
        body: CreateListBody,
        response: {
          202: {
            ...ListResponse,
            description: 'The list, queued',
            headers: { location: { type: 'string', description: '/lists/{id}' } },
          },
          ...errors,
        },
      },
      bodyLimit: limits.maxBytes,
      onRequest: guard,
      // The list's distinct addresses are charged by createList, once the upload has been read.
      config: { rateLimitCost: 'handler' },
      // The body is a stream for uploads and is checked by the handler for JSON; the query goes through the
      // service's one validator (coerced like every query string).
      validatorCompiler: (route) =>
        route.httpPart === 'body'
          ? (body: unknown) => ({ value: body })
          : queryValidator({ ...route, httpPart: route.httpPart ?? 'querystring' }),
    },
    async (request, reply) => {
      const principal = request.principal!;
      const query = request.query;
      const idempotencyKey = readIdempotencyKey(request);
      const upload = request.body instanceof Readable ? (request.body as Readable) : null;
      let entries: AsyncIterable<ListEntry>;
      let columns: () => string[] | null;
      let name = query.name ?? '';
      let callbackUrl = query.callback_url ?? null;
      let maxAgeSec = query.max_age ?? null;
      let releaseSlot = () => {};
      try {
        if (upload) {
          const declared = Number(request.headers['content-length']);
          if (Number.isFinite(declared) && declared > limits.maxBytes)
            throw new ListTooLargeError(`A list upload is at most ${limits.maxBytes} bytes`);
          releaseSlot = await uploadSlots.acquire();
          const kind = /^text\/csv/i.test(request.headers['content-type'] ?? '') ? 'csv' : 'plain';
          const source = parseUpload(upload, {
            kind,
            emailColumn: query.email_column,
            maxBytes: limits.maxBytes,
          });
          entries = source.entries;
          columns = source.columns;
        } else {
          const body = checkJsonListBody(request.body);
          if (body.emails.length > limits.maxAddresses)
            throw new ListTooLargeError(`A list holds at most ${limits.maxAddresses} addresses`);
          entries = (async function* () {
            for (const email of body.emails) yield { email, fields: null };
          })();
          columns = () => null;
          name = body.name ?? name;
          callbackUrl = body.callback_url ?? callbackUrl;
          maxAgeSec = body.max_age ?? maxAgeSec;
        }
        if (callbackUrl !== null) await checkListCallbackUrl(callbackUrl, deps.config.webhook.allowPrivate);
        const created = await createList(
          { database: deps.database, queues: deps.queues, budget, logger: log },
          {
            userId: principal.userId,
            keyId: principal.keyId,
            name,
            callbackUrl,
            idempotencyKey,
            maxAgeSec,
            entries,
            columns,
            maxAddresses: limits.maxAddresses,
          },
        );
        if (created.decision) {
          request.rateLimit = created.decision;
          reply.headers(rateLimitHeaders(created.decision));
        }
        if (created.created)
          log.info(
            { listId: created.list.id, total: created.list.total, unique: created.list.unique_count },
            'list created',
          );
        reply.code(202).header('location', `/lists/${created.list.id}`);
        return { success: true as const, data: await viewOf(deps.database, created.list) };
      } catch (err) {
        if (err instanceof ListChargeRefusedError) request.rateLimit = err.decision;
        // The rest of an upload we stopped reading is not worth receiving: the connection closes after the answer.
        if (upload && !upload.readableEnded) closeAfterAnswer(reply);
        throw err;
      } finally {
        releaseSlot();
      }
    },
  );

  app.get(
    '/lists',
    {
      schema: {
        tags: ['lists'],
        summary: "The key owner's lists, newest first",
        querystring: PageQuery,
        response: { 200: ListsPageResponse, ...errors },
      },
      onRequest: guard,
      // Free: the list's addresses paid for it (docs/verification.md, Budget).
      config: { rateLimitCost: 'free' },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { lists, total } = await pageOfLists(deps.database.db, request.principal!.userId, {
        limit,
        offset: (page - 1) * limit,
      });
      const views = await Promise.all(lists.map((l) => viewOf(deps.database, l)));
      return { success: true as const, data: { lists: views, pagination: paginate({ page, limit }, total) } };
    },
  );

  app.get(
    '/lists/:id',
    {
      schema: {
        tags: ['lists'],
        summary: 'A list and its progress',
        params: ListParams,
        response: { 200: ListResponse, ...errors },
      },
      onRequest: guard,
      // Free: the list's addresses paid for it (docs/verification.md, Budget).
      config: { rateLimitCost: 'free' },
    },
    async (request) => ({
      success: true as const,
      data: await viewOf(deps.database, await owned(request, request.params.id)),
    }),
  );

  app.get(
    '/lists/:id/results',
    {
      schema: {
        tags: ['lists'],
        summary: 'Results so far, in input order',
        description:
          'Each result is the /verify result object plus its 1-based input row; only rows already verified appear. ' +
          'format=json pages (limit up to 1000); ndjson and csv stream every matching row without paging. CSV keeps ' +
          'the uploaded columns and appends the result fields; cells starting with = + - @ are prefixed with an ' +
          'apostrophe.',
        params: ListParams,
        querystring: ResultsQuery,
        produces: ['application/json', 'application/x-ndjson', 'text/csv'],
        response: {
          200: {
            ...ResultsResponse,
            description: 'format=json; ndjson (application/x-ndjson) and csv (text/csv) stream instead',
          },
          ...errors,
        },
      },
      onRequest: guard,
      // Free: the list's addresses paid for it (docs/verification.md, Budget).
      config: { rateLimitCost: 'free' },
    },
    async (request, reply) => {
      const list = await owned(request, request.params.id);
      const { format, page, limit, after_row: afterRow } = request.query;
      const statuses = parseStatusFilter(request.query.status);
      if (format === 'ndjson')
        return reply
          .type('application/x-ndjson; charset=utf-8')
          .send(ndjsonStream(deps.database, list.id, statuses, { afterRow }) as never);
      if (format === 'csv') {
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${list.id}.csv"`);
        return reply.send(csvStream(deps.database, list.id, list.columns, statuses, { afterRow }) as never);
      }
      if (afterRow !== undefined)
        throw new ValidationError(
          'after_row resumes the ndjson and csv streams; format=json pages with page and limit',
        );
      const rows = await resultsPage(deps.database.db, list.id, statuses, {
        limit,
        offset: (page - 1) * limit,
      });
      // The counters are kept with the results (one transaction): no count query over the rows.
      const counts: Record<string, number> = {
        valid: list.valid_count,
        invalid: list.invalid_count,
        risky: list.risky_count,
        unknown: list.unknown_count,
      };
      const total = statuses === null ? list.processed : statuses.reduce((sum, s) => sum + counts[s]!, 0);
      return {
        success: true as const,
        data: {
          results: rows.map(orderedResult) as never[],
          complete: ENDED.has(list.status),
          pagination: paginate({ page, limit }, total),
        },
      };
    },
  );

  app.delete(
    '/lists/:id',
    {
      schema: {
        tags: ['lists'],
        summary: 'Cancel a running list, or delete an ended one',
        description:
          'A queued or running list is cancelled (200 with the list): nothing more is probed, what is done stays ' +
          'readable, the points of the addresses never verified are refunded. An ended list is deleted with its ' +
          'results (204); it is a 404 afterwards.',
        params: ListParams,
        response: { 200: ListResponse, 204: { type: 'null', description: 'Deleted' }, ...errors },
      },
      onRequest: guard,
      // Free: the list's addresses paid for it (docs/verification.md, Budget).
      config: { rateLimitCost: 'free' },
    },
    async (request, reply) => {
      const list = await owned(request, request.params.id);
      if (!ENDED.has(list.status)) {
        // Cancelled now, or ended on its own meanwhile: either way the caller gets the list as it ended.
        await endList(endDeps, list.id, 'cancelled');
        const ended = await findList(deps.database.db, list.id, null);
        if (!ended) throw new NotFoundError('List not found');
        return { success: true as const, data: await viewOf(deps.database, ended) };
      }
      await deleteList(deps.database.db, list.id);
      return reply.code(204).send(null);
    },
  );
};

function readIdempotencyKey(request: FastifyRequest): string | null {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200 || value.includes('\u0000'))
    throw new ValidationError('Idempotency-Key must be one non-empty header of at most 200 characters');
  return value.trim();
}

function closeAfterAnswer(reply: FastifyReply): void {
  reply.header('connection', 'close');
}
