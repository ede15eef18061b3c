import { sql, type SQL } from 'drizzle-orm';
import { arrayLiteral } from '../bulk/array-literal.js';
import { iso } from './pagination.js';
import { rows, type Executor } from './rows.js';

/**
 * SQL of the asynchronous verification lists (migration 0005). A list's progress lives only here: its rows, its
 * distinct addresses (each claimed by one chunk job, then verified once) and the counters, which are changed in
 * the same transaction as the results they count.
 */

export type ListStatus = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';
export const ACTIVE_STATUSES: readonly ListStatus[] = ['queued', 'running'];

export type { Executor };
export const run = rows;

export interface ListRecord {
  id: string;
  user_id: number;
  key_id: number;
  name: string;
  status: ListStatus;
  total: number;
  unique_count: number;
  processed: number;
  probed: number;
  valid_count: number;
  invalid_count: number;
  risky_count: number;
  unknown_count: number;
  columns: string[] | null;
  callback_url: string | null;
  charged: number;
  charge_windows: Record<string, number> | null;
  /** The creation's max_age (seconds): the oldest cached verdict its chunks accept; null accepts any still kept. */
  max_age_sec: number | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** Seconds since started_at by the database's clock (null before the list started). */
  running_seconds: number | null;
  /** Seconds until the last retry of an address waiting for one (greylisted) is due; null when none waits. */
  retry_wait_seconds: number | null;
  username: string;
}

const L = sql.raw('verification_lists');

/**
 * JSON for a jsonb value: PostgreSQL refuses the NUL character (\u0000) in jsonb, and uploaded cells or a remote
 * SMTP reply may hold one; it is dropped from every string.
 */
export const jsonb = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? v.replaceAll('\u0000', '') : v));

const listColumns = sql`l.id, l.user_id, l.key_id, l.name, l.status, l.total, l.unique_count, l.processed,
  l.probed, l.valid_count, l.invalid_count, l.risky_count, l.unknown_count, l.columns, l.callback_url, l.charged,
  l.charge_windows, l.max_age_sec, ${iso(sql`l.created_at`)} AS created_at, ${iso(sql`l.started_at`)} AS started_at,
  ${iso(sql`l.completed_at`)} AS completed_at,
  EXTRACT(EPOCH FROM (now() - l.started_at))::float8 AS running_seconds,
  (SELECT EXTRACT(EPOCH FROM (max(a.retry_at) - now()))::float8 FROM verification_list_addresses a
   WHERE a.list_id = l.id AND a.retry_at IS NOT NULL AND NOT a.verified) AS retry_wait_seconds,
  (SELECT u.username FROM users u WHERE u.id = l.user_id) AS username`;

export interface NewList {
  id: string;
  userId: number;
  keyId: number;
  name: string;
  callbackUrl: string | null;
  idempotencyKey: string | null;
  maxAgeSec: number | null;
}

/** Inserts the list row; a second creation with the same idempotency key fails on the unique index (23505). */
export async function insertList(db: Executor, list: NewList): Promise<void> {
  await run(
    db,
    sql`INSERT INTO ${L} (id, user_id, key_id, name, callback_url, idempotency_key, max_age_sec)
        VALUES (${list.id}, ${list.userId}, ${list.keyId}, ${list.name}, ${list.callbackUrl}, ${list.idempotencyKey},
                ${list.maxAgeSec})`,
  );
}

export interface NewRow {
  row: number;
  email: string;
  address: string;
  fields: string[] | null;
}

/** One statement per batch: one array parameter per column, whatever the number of rows. */
export async function insertRows(db: Executor, listId: string, batch: readonly NewRow[]): Promise<void> {
  if (batch.length === 0) return;
  await run(
    db,
    sql`INSERT INTO verification_list_rows (list_id, row, email, address, fields)
        SELECT ${listId}, r, e, a, f
        FROM unnest(${arrayLiteral(batch.map((b) => b.row))}::int[], ${arrayLiteral(batch.map((b) => b.email))}::text[],
                    ${arrayLiteral(batch.map((b) => b.address))}::text[],
                    ${arrayLiteral(batch.map((b) => (b.fields === null ? null : jsonb(b.fields))))}::jsonb[])
             AS t(r, e, a, f)`,
  );
}

/**
 * Once every row is in: the distinct addresses (the first spelling of each is the one probed) and the list's
 * totals. The domain is what follows the last '@' of the key; the claim order keeps a domain's addresses together in
 * blocks of `blockSize` (a chunk's size).
 */
export async function finishUpload(
  db: Executor,
  listId: string,
  columns: string[] | null,
  blockSize: number,
): Promise<{ total: number; unique: number }> {
  await run(
    db,
    // The claim order (migration 0019): a domain's addresses in blocks of a chunk's size, each block placed by a
    // hash of the domain and its number, so that a large domain's blocks are spread over the list's whole run.
    sql`INSERT INTO verification_list_addresses (list_id, address, email, domain, claim_order)
        SELECT list_id, address, email, domain,
               hashtext(domain || ':' || (row_number() OVER (PARTITION BY domain ORDER BY address) - 1) / ${blockSize})
        FROM (SELECT DISTINCT ON (address) list_id, address, email,
                     coalesce(substring(address FROM '@([^@]*)$'), '') AS domain
              FROM verification_list_rows WHERE list_id = ${listId}
              ORDER BY address, row) d`,
  );
  const [totals] = await run<{ total: number; unique: number }>(
    db,
    sql`UPDATE ${L} SET
          columns = ${columns === null ? null : jsonb(columns)}::jsonb,
          total = (SELECT count(*) FROM verification_list_rows WHERE list_id = ${listId}),
          unique_count = (SELECT count(*) FROM verification_list_addresses WHERE list_id = ${listId})
        WHERE id = ${listId} RETURNING total, unique_count AS unique`,
  );
  return totals!;
}

export async function recordCharge(
  db: Executor,
  listId: string,
  charged: number,
  windows: Record<string, number> | null,
): Promise<void> {
  await run(
    db,
    sql`UPDATE ${L} SET charged = ${charged}, charge_windows = ${windows === null ? null : JSON.stringify(windows)}::jsonb
        WHERE id = ${listId}`,
  );
}

/** The list if it exists and belongs to `userId` (any owner when userId is null: the workers, the admin panel). */
export async function findList(
  db: Executor,
  id: string,
  userId: number | null,
): Promise<ListRecord | undefined> {
  const owner = userId === null ? sql`` : sql`AND l.user_id = ${userId}`;
  const [row] = await run<ListRecord>(db, sql`SELECT ${listColumns} FROM ${L} l WHERE l.id = ${id} ${owner}`);
  return row;
}

/** The list an owner created with an Idempotency-Key, with the hash of what that creation sent. */
export async function findByIdempotencyKey(
  db: Executor,
  userId: number,
  key: string,
): Promise<(ListRecord & { request_hash: string | null }) | undefined> {
  const [row] = await run<ListRecord & { request_hash: string | null }>(
    db,
    sql`SELECT ${listColumns}, l.request_hash FROM ${L} l WHERE l.user_id = ${userId} AND l.idempotency_key = ${key}`,
  );
  return row;
}

export async function recordRequestHash(db: Executor, listId: string, hash: string): Promise<void> {
  await run(db, sql`UPDATE ${L} SET request_hash = ${hash} WHERE id = ${listId}`);
}

/** Newest first; `userId` null lists every owner's (admin panel). */
export async function pageOfLists(
  db: Executor,
  userId: number | null,
  page: { limit: number; offset: number },
): Promise<{ lists: ListRecord[]; total: number }> {
  const owner = userId === null ? sql`TRUE` : sql`l.user_id = ${userId}`;
  const lists = await run<ListRecord>(
    db,
    sql`SELECT ${listColumns} FROM ${L} l WHERE ${owner}
        ORDER BY l.created_at DESC, l.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
  );
  const [count] = await run<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${L} l WHERE ${owner}`);
  return { lists, total: count!.n };
}

export interface ResultRow {
  row: number;
  fields: string[] | null;
  result: Record<string, unknown>;
}

const statusFilter = (statuses: readonly string[] | null): SQL =>
  statuses === null ? sql`` : sql`AND r.result->>'status' = ANY(${arrayLiteral(statuses)}::text[])`;

/** Finished rows in input order after row `afterRow` (keyset: reads stay cheap deep into a million rows). */
export async function resultsAfter(
  db: Executor,
  listId: string,
  statuses: readonly string[] | null,
  afterRow: number,
  limit: number,
): Promise<ResultRow[]> {
  return run<ResultRow>(
    db,
    sql`SELECT r.row, r.fields, r.result FROM verification_list_rows r
        WHERE r.list_id = ${listId} AND r.row > ${afterRow} AND r.result IS NOT NULL ${statusFilter(statuses)}
        ORDER BY r.row LIMIT ${limit}`,
  );
}

export async function resultsPage(
  db: Executor,
  listId: string,
  statuses: readonly string[] | null,
  page: { limit: number; offset: number },
): Promise<ResultRow[]> {
  return run<ResultRow>(
    db,
    sql`SELECT r.row, r.fields, r.result FROM verification_list_rows r
        WHERE r.list_id = ${listId} AND r.result IS NOT NULL ${statusFilter(statuses)}
        ORDER BY r.row LIMIT ${page.limit} OFFSET ${page.offset}`,
  );
}

/** Locks the list row: the chunk writers, a cancel and a failure serialise on it. */
export async function lockList(db: Executor, id: string): Promise<ListStatus | undefined> {
  const [row] = await run<{ status: ListStatus }>(
    db,
    sql`SELECT status FROM ${L} WHERE id = ${id} FOR UPDATE`,
  );
  return row?.status;
}

/** The list's status, without a lock: what a probing chunk looks at to notice a cancel. */
export async function listStatus(db: Executor, id: string): Promise<ListStatus | undefined> {
  const [row] = await run<{ status: ListStatus }>(db, sql`SELECT status FROM ${L} WHERE id = ${id}`);
  return row?.status;
}

/** Locks the list row for a chunk or a retry: its status and the max_age its probes honour. */
export async function lockForWork(
  db: Executor,
  id: string,
): Promise<{ status: ListStatus; maxAgeSec: number | null } | undefined> {
  const [row] = await run<{ status: ListStatus; max_age_sec: number | null }>(
    db,
    sql`SELECT status, max_age_sec FROM ${L} WHERE id = ${id} FOR UPDATE`,
  );
  return row && { status: row.status, maxAgeSec: row.max_age_sec };
}

/**
 * Ends an active list (cancelled or failed) once: the conditional UPDATE decides, so the callback fires once.
 * Returns the addresses never verified, whose points are refunded.
 */
export async function endActiveList(
  db: Executor,
  id: string,
  status: 'cancelled' | 'failed',
): Promise<{ unverified: number } | undefined> {
  const [row] = await run<{ unverified: number }>(
    db,
    sql`UPDATE ${L} SET status = ${status}, completed_at = now()
        WHERE id = ${id} AND status IN ('queued', 'running')
        RETURNING unique_count - probed AS unverified`,
  );
  return row;
}

/** The webhook secret that signs a list's callback; null when its key was revoked (nothing is sent then). */
export async function callbackSecret(db: Executor, keyId: number): Promise<string | null> {
  const [row] = await run<{ secret: string }>(
    db,
    sql`SELECT webhook_secret AS secret FROM api_keys WHERE id = ${keyId} AND revoked_at IS NULL`,
  );
  return row?.secret ?? null;
}

export async function deleteList(db: Executor, id: string): Promise<void> {
  await run(db, sql`DELETE FROM ${L} WHERE id = ${id}`);
}

// ---- chunk processing (workers/lists) ------------------------------------------------------------------------

export interface ClaimedAddress {
  address: string;
  email: string;
}

/**
 * Inside the caller's transaction, with the list locked: the addresses of chunk `chunk` still unverified. A chunk
 * that never claimed anything claims up to `size` unclaimed addresses in their claim order (whole blocks of a
 * domain's addresses, large domains' blocks spread over the list: migration 0019); a chunk retried after a
 * crash finds the ones it claimed, minus those whose results were already stored or that wait for a retry.
 */
export async function claimChunk(
  db: Executor,
  listId: string,
  chunk: number,
  size: number,
): Promise<ClaimedAddress[]> {
  const mine = await run<ClaimedAddress & { settled_or_waiting: boolean }>(
    db,
    sql`SELECT address, email, verified OR retry_at IS NOT NULL AS settled_or_waiting
        FROM verification_list_addresses WHERE list_id = ${listId} AND chunk = ${chunk}`,
  );
  // A deferred address is the retry jobs' (retryDue), never its chunk's again.
  if (mine.length > 0)
    return mine.filter((a) => !a.settled_or_waiting).map(({ address, email }) => ({ address, email }));
  return run<ClaimedAddress>(
    db,
    sql`UPDATE verification_list_addresses a SET chunk = ${chunk}
        FROM (SELECT address FROM verification_list_addresses
              WHERE list_id = ${listId} AND chunk IS NULL
              ORDER BY claim_order NULLS FIRST, domain, address LIMIT ${size}) c
        WHERE a.list_id = ${listId} AND a.address = c.address
        RETURNING a.address, a.email`,
  );
}

export async function markStarted(db: Executor, listId: string): Promise<void> {
  await run(
    db,
    sql`UPDATE ${L} SET status = 'running', started_at = now() WHERE id = ${listId} AND status = 'queued'`,
  );
}

/**
 * Stores the results of verified addresses: each address is marked verified once, each of its rows gets its
 * result once (with the row's own spelling of the address), and the counters move in the same statement.
 * Returns whether addresses remain unverified and unclaimed.
 */
export async function storeResults(
  db: Executor,
  listId: string,
  results: readonly { address: string; result: unknown }[],
): Promise<{ pending: boolean; unclaimed: boolean }> {
  const input = jsonb(results);
  await run(
    db,
    sql`WITH input AS (
          SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS i(address text, result jsonb)
        ), newly AS (
          UPDATE verification_list_addresses a SET verified = true FROM input
          WHERE a.list_id = ${listId} AND a.address = input.address AND NOT a.verified
          RETURNING a.address
        ), written AS (
          UPDATE verification_list_rows r SET result = input.result || jsonb_build_object('email', r.email)
          FROM input JOIN newly USING (address)
          WHERE r.list_id = ${listId} AND r.address = input.address AND r.result IS NULL
          RETURNING r.result->>'status' AS status
        )
        UPDATE ${L} SET
          probed = probed + (SELECT count(*) FROM newly),
          processed = processed + (SELECT count(*) FROM written),
          valid_count = valid_count + (SELECT count(*) FROM written WHERE status = 'valid'),
          invalid_count = invalid_count + (SELECT count(*) FROM written WHERE status = 'invalid'),
          risky_count = risky_count + (SELECT count(*) FROM written WHERE status = 'risky'),
          unknown_count = unknown_count + (SELECT count(*) FROM written WHERE status = 'unknown')
        WHERE id = ${listId}`,
  );
  const [state] = await run<{ pending: boolean; unclaimed: boolean }>(
    db,
    sql`SELECT
          EXISTS (SELECT 1 FROM verification_list_addresses WHERE list_id = ${listId} AND NOT verified) AS pending,
          EXISTS (SELECT 1 FROM verification_list_addresses WHERE list_id = ${listId} AND chunk IS NULL) AS unclaimed`,
  );
  return state!;
}

/** Marks a running list completed; true for the one caller whose UPDATE did it (that caller fires the callback). */
export async function completeList(db: Executor, listId: string): Promise<boolean> {
  const rows = await run(
    db,
    sql`UPDATE ${L} SET status = 'completed', completed_at = now()
        WHERE id = ${listId} AND status = 'running' RETURNING id`,
  );
  return rows.length > 0;
}

export async function hasUnclaimed(db: Executor, listId: string): Promise<boolean> {
  const [row] = await run<{ unclaimed: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM verification_list_addresses WHERE list_id = ${listId} AND chunk IS NULL)
        AS unclaimed`,
  );
  return row!.unclaimed;
}

// ---- sweeper --------------------------------------------------------------------------------------------------

export async function activeLists(db: Executor): Promise<{ id: string; uniqueCount: number }[]> {
  const rows = await run<{ id: string; unique_count: number }>(
    db,
    sql`SELECT id, unique_count FROM ${L} WHERE status IN ('queued', 'running') ORDER BY created_at`,
  );
  return rows.map((r) => ({ id: r.id, uniqueCount: Number(r.unique_count) }));
}

export interface LaneState {
  lane: number;
  /** The lane's latest claimed chunk, or null when it has claimed none. */
  head: number | null;
  /** That chunk still has addresses without a result (other than those waiting for a retry). */
  headPending: boolean;
}

/** For each lane (chunk mod `lanes`), its latest chunk and whether that chunk is unfinished. */
export async function laneStates(db: Executor, listId: string, lanes: number): Promise<LaneState[]> {
  const rows = await run<{ lane: number; head: number; head_pending: boolean }>(
    db,
    sql`WITH heads AS (
          SELECT chunk % ${lanes} AS lane, max(chunk) AS head FROM verification_list_addresses
          WHERE list_id = ${listId} AND chunk IS NOT NULL GROUP BY 1
        )
        SELECT lane, head, EXISTS (
          SELECT 1 FROM verification_list_addresses
          WHERE list_id = ${listId} AND chunk = heads.head AND NOT verified AND retry_at IS NULL
        ) AS head_pending FROM heads`,
  );
  return Array.from({ length: lanes }, (_, lane) => {
    const found = rows.find((r) => Number(r.lane) === lane);
    return found
      ? { lane, head: Number(found.head), headPending: found.head_pending }
      : { lane, head: null, headPending: false };
  });
}

// ---- retries of deferred (greylisted) addresses ----------------------------------------------------------------

export interface RetryPolicy {
  /** The first delay; the following ones are 3 and then 6 times it. */
  delayMs: number;
  /** How long after its first deferral an address may still be deferred again. */
  windowMs: number;
}

/**
 * Defers addresses whose probe was deferred by the remote host: each waits, unverified, until retry_at (1, 3, then 6
 * times the delay after this deferral) if that falls within the window of its first deferral. Returns those deferred
 * with the epoch ms of their retry; the others (window spent) are for the caller to settle with their result.
 */
export async function deferAddresses(
  db: Executor,
  listId: string,
  addresses: readonly string[],
  policy: RetryPolicy,
): Promise<{ address: string; due: number }[]> {
  if (addresses.length === 0 || policy.windowMs <= 0) return [];
  const delay = sql`(${policy.delayMs}::float8 * CASE a.deferrals WHEN 0 THEN 1 WHEN 1 THEN 3 ELSE 6 END)
    * interval '1 millisecond'`;
  return run<{ address: string; due: number }>(
    db,
    sql`UPDATE verification_list_addresses a SET
          retry_at = now() + ${delay},
          deferrals = a.deferrals + 1,
          first_deferred_at = coalesce(a.first_deferred_at, now())
        WHERE a.list_id = ${listId} AND a.address = ANY(${arrayLiteral(addresses)}::text[]) AND NOT a.verified
          AND now() + ${delay} <= coalesce(a.first_deferred_at, now()) + ${policy.windowMs} * interval '1 millisecond'
        RETURNING a.address, (EXTRACT(EPOCH FROM a.retry_at) * 1000)::float8 AS due`,
  );
}

/**
 * Inside the caller's transaction, with the list locked: up to `limit` deferred addresses whose retry is due, a
 * domain's together. Their retry_at moves `leaseMs` ahead while they are probed: if the worker dies, they are due
 * again then.
 */
export async function claimDue(
  db: Executor,
  listId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedAddress[]> {
  return run<ClaimedAddress>(
    db,
    sql`UPDATE verification_list_addresses a SET retry_at = now() + ${leaseMs} * interval '1 millisecond'
        FROM (SELECT address FROM verification_list_addresses
              WHERE list_id = ${listId} AND NOT verified AND retry_at <= now()
              ORDER BY domain, address LIMIT ${limit}) d
        WHERE a.list_id = ${listId} AND a.address = d.address
        RETURNING a.address, a.email`,
  );
}

/** When the list's next deferred address is due (epoch ms), or null when none waits. */
export async function nextRetryDue(db: Executor, listId: string): Promise<number | null> {
  const [row] = await run<{ due: number | null }>(
    db,
    sql`SELECT (EXTRACT(EPOCH FROM min(retry_at)) * 1000)::float8 AS due FROM verification_list_addresses
        WHERE list_id = ${listId} AND retry_at IS NOT NULL AND NOT verified`,
  );
  return row?.due ?? null;
}
