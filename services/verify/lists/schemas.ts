import { Type } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../../shared/errors.js';
import { MaxAge, VerificationResult } from '../schemas.js';

/**
 * Schemas of the list routes (docs/verification.md, "Lists"). Each carries a `title`: the OpenAPI document names it
 * as a component (services/http/components.ts does the same for the other schemas).
 */

export const RESULT_STATUSES = ['valid', 'invalid', 'risky', 'unknown'] as const;
export const RESULT_FORMATS = ['json', 'ndjson', 'csv'] as const;

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const ListCallback = Type.Object(
  {
    attempts: Type.Integer({ minimum: 0 }),
    last_status: Type.Union([Type.Integer(), Type.Null()], {
      description: 'HTTP status of the last attempt',
    }),
    delivered_at: NullableTimestamp,
  },
  { title: 'ListCallback', description: 'Delivery of the callback POSTed when the list ends' },
);

export const VerificationList = Type.Object(
  {
    id: Type.String({ description: 'Opaque, unguessable id' }),
    name: Type.String(),
    status: Type.Union([
      Type.Literal('queued'),
      Type.Literal('running'),
      Type.Literal('completed'),
      Type.Literal('cancelled'),
      Type.Literal('failed'),
    ]),
    total: Type.Integer({ description: 'Rows of the list' }),
    unique: Type.Integer({
      description: 'Distinct addresses (domain compared case-insensitively); each is verified once',
    }),
    duplicates: Type.Integer({ description: 'total - unique' }),
    processed: Type.Integer({ description: 'Rows with a result' }),
    progress: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: 'processed / total, in percent, floored',
    }),
    counts: Type.Object(
      {
        valid: Type.Integer(),
        invalid: Type.Integer(),
        risky: Type.Integer(),
        unknown: Type.Integer(),
      },
      { description: 'Rows with a result, by status' },
    ),
    created_at: Timestamp,
    started_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    eta_seconds: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Seconds left at the rate observed so far; null before a rate is known and once ended',
    }),
    callback_url: Type.Union([Type.String(), Type.Null()]),
    callback: Type.Union([ListCallback, Type.Null()], { description: 'null without a callback_url' }),
  },
  { title: 'VerificationList' },
);

export const ListResponse = Type.Object({ success: Type.Literal(true), data: VerificationList });

const Pagination = Type.Object({
  current_page: Type.Integer(),
  total_pages: Type.Integer({ description: 'ceil(total_items / per_page)' }),
  total_items: Type.Integer(),
  per_page: Type.Integer(),
});

export const ListsPageResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ lists: Type.Array(VerificationList), pagination: Pagination }),
});

export const ListResult = Type.Intersect(
  [VerificationResult, Type.Object({ row: Type.Integer({ minimum: 1, description: '1-based input row' }) })],
  { title: 'ListResult' },
);

export const ResultsResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    results: Type.Array(ListResult, { description: 'In input order; only rows already verified' }),
    complete: Type.Boolean({ description: 'The list has ended: no more results will come' }),
    pagination: Pagination,
  }),
});

export const ListParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** Page numbers past this are refused rather than sent to PostgreSQL as offsets past int8 (as on the Q&A API). */
export const MAX_PAGE = 1_000_000;

export const PageQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: '1-based page number' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page (1-100)' }),
});

export const ResultsQuery = Type.Object({
  format: Type.Enum([...RESULT_FORMATS], {
    default: 'json',
    description: 'json pages; ndjson and csv stream every (matching) result without paging',
  }),
  status: Type.Optional(
    Type.String({ maxLength: 100, description: 'Comma-separated statuses to keep, e.g. valid,risky' }),
  ),
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  after_row: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2147483647,
      description:
        'ndjson and csv: only rows after this input row, to resume a download that was cut (from 1 on, csv has ' +
        'no header row, so the rest appends to the file); json pages with page and limit instead',
    }),
  ),
});

export const CreateQuery = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\u0000]*$' })),
  callback_url: Type.Optional(Type.String({ maxLength: 2048 })),
  email_column: Type.Optional(
    Type.String({
      maxLength: 200,
      pattern: '^[^\\u0000]*$',
      description: 'CSV uploads: the header of the column of addresses, or its 1-based index',
    }),
  ),
  max_age: Type.Optional(MaxAge),
});

export const CreateListBody = Type.Object(
  {
    emails: Type.Array(Type.String()),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    callback_url: Type.Optional(Type.String({ maxLength: 2048 })),
    max_age: Type.Optional(MaxAge),
  },
  {
    title: 'CreateListBody',
    description:
      'JSON form. A CSV (text/csv) or one address per line (text/plain) upload is accepted too, with name, ' +
      'callback_url, email_column and max_age as query parameters.',
  },
);

export interface JsonListBody {
  emails: string[];
  name?: string;
  callback_url?: string;
  max_age?: number;
}

// MaxAge's bounds, checked by hand because the JSON body bypasses the schema validator (see routes.ts).
const MAX_AGE_LIMIT = (MaxAge as { maximum?: number }).maximum!;

const isObject = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body);

/** Our own check of the JSON body (no type coercion), naming the field at fault. */
export function checkJsonListBody(sent: unknown): JsonListBody {
  if (!isObject(sent)) throw new ValidationError('The body must be a JSON object: {"emails": ["..."]}');
  // A null name or callback_url is one not given (as clients serialise an unset optional text). max_age keeps
  // /verify's rule: a number of seconds or absent (null would read as "no limit" to some, "0" to others).
  const body = Object.fromEntries(
    Object.entries(sent).filter(
      ([field, value]) => value !== null || (field !== 'name' && field !== 'callback_url'),
    ),
  );
  if (!Array.isArray(body.emails)) throw new ValidationError('emails must be an array of strings');
  const bad = body.emails.findIndex((e) => typeof e !== 'string');
  if (bad >= 0) throw new ValidationError(`emails[${bad}] must be a string`);
  for (const field of ['name', 'callback_url'] as const) {
    if (body[field] !== undefined && typeof body[field] !== 'string')
      throw new ValidationError(`${field} must be a string`);
  }
  for (const field of ['name', 'callback_url'] as const) {
    if (typeof body[field] === 'string' && body[field].includes('\u0000'))
      throw new ValidationError(`${field} must not contain NUL`);
  }
  if (typeof body.name === 'string' && body.name.length > 200)
    throw new ValidationError('name is longer than 200');
  if (typeof body.callback_url === 'string' && body.callback_url.length > 2048)
    throw new ValidationError('callback_url is longer than 2048');
  if (
    body.max_age !== undefined &&
    (typeof body.max_age !== 'number' ||
      !Number.isInteger(body.max_age) ||
      body.max_age < 0 ||
      body.max_age > MAX_AGE_LIMIT)
  )
    throw new ValidationError(`max_age must be a whole number of seconds from 0 to ${MAX_AGE_LIMIT}`);
  return body as unknown as JsonListBody;
}

/** `valid,risky` → the statuses; null when absent. */
export function parseStatusFilter(value: string | undefined): string[] | null {
  if (value === undefined || value.trim() === '') return null;
  const statuses = [...new Set(value.split(',').map((s) => s.trim().toLowerCase()))];
  const unknown = statuses.filter((s) => !(RESULT_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new ValidationError(`status: ${unknown.join(', ')} is not one of ${RESULT_STATUSES.join(', ')}`);
  return statuses;
}
