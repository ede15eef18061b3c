import { createHash } from 'node:crypto';
import type { Database } from '../db/client.js';
import { isUniqueViolation } from '../db/errors.js';
import {
  finishUpload,
  findByIdempotencyKey,
  findList,
  insertList,
  insertRows,
  recordCharge,
  recordRequestHash,
  type Executor,
  type ListRecord,
  type NewRow,
} from '../db/repositories/verification-lists.js';
import { AppError, RateLimitedError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queues/producer.js';
import { LIST_CHUNK_ADDRESSES, listLanes } from '../queues/verify-lists.js';
import type { Decision } from '../ratelimit/limiter.js';
import { parseAddress } from '../verification/index.js';
import type { Charge, ListBudget } from './budget.js';
import { enqueueChunks } from './enqueue.js';
import { newListId } from './ids.js';

/** Rows written per INSERT while an upload streams in: memory holds one batch, whatever the list's size. */
const INSERT_BATCH = 5000;

export interface ListEntry {
  /** The cell holding the address, as uploaded. */
  email: string;
  /** Every cell of the uploaded row (CSV), null for a JSON list. */
  fields: string[] | null;
}

export interface CreateListInput {
  userId: number;
  keyId: number;
  name: string;
  callbackUrl: string | null;
  idempotencyKey: string | null;
  /** max_age (seconds) of the creation, honoured by every chunk; null accepts any cached verdict still kept. */
  maxAgeSec: number | null;
  entries: AsyncIterable<ListEntry>;
  /** The uploaded header, known once the entries have been read (null for JSON and headerless uploads). */
  columns: () => string[] | null;
  maxAddresses: number;
}

export interface CreateListDeps {
  database: Database;
  queues: Queues;
  budget: ListBudget;
  logger: Logger;
}

export interface Created {
  list: ListRecord;
  /** False when an earlier creation with the same Idempotency-Key is returned. */
  created: boolean;
  /** The budget decision of the charge (headers of the answer); null when nothing was counted. */
  decision: Decision | null;
}

/** The budget cannot pay for the list's distinct addresses: a 429 that carries the decision for its headers. */
export class ListChargeRefusedError extends RateLimitedError {
  constructor(readonly decision: Decision) {
    super(decision.retryAfter ?? 1, headersOf(decision));
  }
}

/** An Idempotency-Key sent again with another list or other settings (draft-ietf-httpapi-idempotency-key-header). */
export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super(
      422,
      'This Idempotency-Key was used for another list: a retry must send the same list and settings',
    );
  }
}

export class ListTooLargeError extends AppError {
  constructor(message: string) {
    super(413, message);
  }
}

/**
 * More distinct addresses than the key's whole budget of a window: a 429 would tell the caller to retry later, and
 * no retry can ever succeed. A 413, as for a list over VERIFY_LIST_MAX_ADDRESSES: the list must be split
 * (docs/verification.md, "Budget").
 */
export class ListOverBudgetError extends ListTooLargeError {
  constructor(unique: number, ceiling: { window: 'hour' | 'day'; limit: number }) {
    const per = ceiling.window === 'hour' ? 'hourly' : 'daily';
    super(
      `This list has ${unique} distinct addresses, more than this key's whole ${per} verification budget of ` +
        `${ceiling.limit}: it cannot be accepted, however long you wait. Split it into lists of at most ` +
        `${ceiling.limit} distinct addresses`,
    );
  }
}

/** Duplicates share this key: the address with its domain in lower-case ASCII; bad syntax as typed (trimmed). */
export function addressKey(email: string): { email: string; address: string } {
  const parsed = parseAddress(email);
  return parsed.ok
    ? { email: parsed.email, address: parsed.address }
    : { email: parsed.email, address: parsed.email };
}

/**
 * Creates a list from streamed entries in one transaction (an upload cut short leaves nothing), charges one point
 * per distinct address before committing (a refused charge leaves nothing either), then enqueues its first chunks.
 */
export async function createList(deps: CreateListDeps, request: CreateListInput): Promise<Created> {
  const sent = fingerprinted(request);
  const input = { ...request, entries: sent.entries };
  if (input.idempotencyKey !== null) {
    const existing = await findByIdempotencyKey(deps.database.db, input.userId, input.idempotencyKey);
    if (existing) return answerRetry(existing, sent);
  }
  const id = newListId();
  // The charge taken inside the transaction, so that it can be given back if the transaction does not commit.
  const held: { charge: (Charge & { points: number }) | null } = { charge: null };
  let uniqueAddresses = 0;
  try {
    await deps.database.db.transaction(async (tx) => {
      await insertList(tx, {
        id,
        userId: input.userId,
        keyId: input.keyId,
        name: input.name,
        callbackUrl: input.callbackUrl,
        idempotencyKey: input.idempotencyKey,
        maxAgeSec: input.maxAgeSec,
      });
      await writeEntries(tx, id, input);
      if (input.idempotencyKey !== null) await recordRequestHash(tx, id, sent.digest());
      const { unique } = await finishUpload(tx, id, input.columns(), LIST_CHUNK_ADDRESSES);
      if (unique === 0) throw new ValidationError('The list holds no addresses');
      uniqueAddresses = unique;
      const ceiling = deps.budget.ceiling();
      if (ceiling && unique > ceiling.limit) throw new ListOverBudgetError(unique, ceiling);
      const charge = await deps.budget.charge(input.keyId, unique);
      // A refused charge has given its points back already.
      if (charge.decision && !charge.decision.allowed) throw new ListChargeRefusedError(charge.decision);
      held.charge = { ...charge, points: unique };
      await recordCharge(tx, id, charge.decision ? unique : 0, charge.windows);
    });
  } catch (err) {
    if (held.charge)
      await deps.budget.refund(input.keyId, held.charge.points, held.charge.windows).catch(() => {});
    if (input.idempotencyKey !== null && isUniqueViolation(err)) {
      const existing = await findByIdempotencyKey(deps.database.db, input.userId, input.idempotencyKey);
      if (existing) return answerRetry(existing, sent);
    }
    throw err;
  }
  const list = (await findList(deps.database.db, id, null))!;
  try {
    await enqueueChunks(
      deps.queues,
      id,
      Array.from({ length: listLanes(uniqueAddresses) }, (_, lane) => lane),
    );
  } catch (err) {
    // The list is stored: the sweeper starts it once the queue is reachable again.
    deps.logger.warn({ err, listId: id }, 'could not enqueue a new list; the sweeper will');
  }
  return { list, created: true, decision: held.charge?.decision ?? null };
}

/**
 * The longest cell accepted as an address, in UTF-8 bytes. A valid address is at most 254 octets; longer ones are
 * kept (and judged invalid) up to this bound. Past it the list is refused: the address is indexed, and PostgreSQL
 * cannot index a value of a few kilobytes ("index row requires … bytes").
 */
export const MAX_LIST_ENTRY_BYTES = 1024;

/** Writes the entries as rows in batches; one batch is written while the next is parsed. */
interface Fingerprinted {
  entries: AsyncIterable<ListEntry>;
  /** The hash of the settings, every entry passed through `entries` and the uploaded header; call once. */
  digest(): string;
}

/** What a retry under the same Idempotency-Key must send again: the settings, every entry in order, the header. */
function fingerprinted(input: CreateListInput): Fingerprinted {
  const hash = createHash('sha256').update(JSON.stringify([input.name, input.callbackUrl, input.maxAgeSec]));
  return {
    entries: (async function* () {
      for await (const entry of input.entries) {
        hash.update(JSON.stringify([entry.email, entry.fields]));
        yield entry;
      }
    })(),
    digest: () => hash.update(JSON.stringify(input.columns())).digest('base64url'),
  };
}

/**
 * The list created earlier under this Idempotency-Key, when this request sends what that one sent (read to its
 * end to know). Lists created before hashes were kept have none and are returned as they are.
 */
async function answerRetry(
  existing: ListRecord & { request_hash: string | null },
  sent: Fingerprinted,
): Promise<Created> {
  if (existing.request_hash !== null) {
    for await (const _ of sent.entries); // read to its end: the digest covers every entry
    if (sent.digest() !== existing.request_hash) throw new IdempotencyKeyReusedError();
  }
  const { request_hash: _, ...list } = existing;
  return { list, created: false, decision: null };
}

async function writeEntries(tx: Executor, id: string, input: CreateListInput): Promise<void> {
  let batch: NewRow[] = [];
  let row = 0;
  let writing: Promise<void> = Promise.resolve();
  const write = async (rows: NewRow[]) => {
    await writing;
    writing = insertRows(tx, id, rows);
    writing.catch(() => {}); // awaited below; a failure is not left unhandled meanwhile
  };
  for await (const entry of input.entries) {
    row += 1;
    if (row > input.maxAddresses)
      throw new ListTooLargeError(`A list holds at most ${input.maxAddresses} addresses`);
    if (Buffer.byteLength(entry.email) > MAX_LIST_ENTRY_BYTES)
      throw new ValidationError(
        `Address ${row} of the list is longer than ${MAX_LIST_ENTRY_BYTES} bytes (a valid one has at most 254)`,
      );
    batch.push({ row, ...addressKey(entry.email), fields: entry.fields });
    if (batch.length >= INSERT_BATCH) {
      await write(batch);
      batch = [];
    }
  }
  await write(batch);
  await writing;
}

function headersOf(decision: Decision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.reset),
  };
}
