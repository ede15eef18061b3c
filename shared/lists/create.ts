import type { Database } from '../db/client.js';
import { isUniqueViolation } from '../db/errors.js';
import {
  finishUpload,
  findByIdempotencyKey,
  findList,
  insertList,
  insertRows,
  recordCharge,
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

export class ListTooLargeError extends AppError {
  constructor(message: string) {
    super(413, message);
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
export async function createList(deps: CreateListDeps, input: CreateListInput): Promise<Created> {
  if (input.idempotencyKey !== null) {
    const existing = await findByIdempotencyKey(deps.database.db, input.userId, input.idempotencyKey);
    if (existing) return { list: existing, created: false, decision: null };
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
      const { unique } = await finishUpload(tx, id, input.columns(), LIST_CHUNK_ADDRESSES);
      if (unique === 0) throw new ValidationError('The list holds no addresses');
      uniqueAddresses = unique;
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
      if (existing) return { list: existing, created: false, decision: null };
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
