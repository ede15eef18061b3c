import { randomUUID } from 'node:crypto';
import type { Database } from '../db/client.js';
import { deliveriesRepository } from '../db/repositories/deliveries.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { deliveryJobId } from '../queues/deliveries.js';
import type { Queues } from '../queues/producer.js';
import { CALLBACK_SCHEDULE, checkSchedule, scheduleJobOptions, type DeliverySchedule } from './schedule.js';
import { parseTargetUrl } from './target.js';

export interface DeliveryRequest {
  url: string;
  secret: string;
  /** Sent as X-Agora-Event, e.g. "list.completed". */
  event: string;
  /** Serialised once with JSON.stringify; every attempt sends (and signs) the same bytes. */
  body: unknown;
  /** What the delivery is about, for deliveryStatus, e.g. "list:<id>". */
  subject: string;
  /** Attempts and backoff; CALLBACK_SCHEDULE (8 attempts over ~6 h) when absent, WEBHOOK_SCHEDULE for webhooks. */
  schedule?: DeliverySchedule;
  /** The id of the request that caused the delivery, carried into the job so that its logs join the request's. */
  requestId?: string;
}

export type DeliveryDeps = { database: Database; queues: Queues };

/** Bodies are bounded: a receiver should not have to take, nor PostgreSQL keep, megabytes per event. */
export const MAX_BODY_BYTES = 256 * 1024;
// The event goes into a header: a token, so that nothing can be smuggled into the request through it.
const EVENT = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;
const MAX_SUBJECT_LENGTH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Checks a delivery request and serialises its body once; throws ValidationError for a request that could never be
 * delivered. Shared by enqueueDelivery and the outbox (outbox.ts).
 */
export function prepareDelivery(request: DeliveryRequest): { body: string; schedule: DeliverySchedule } {
  const url = parseTargetUrl(request.url);
  if (typeof url === 'string') throw new ValidationError(`Invalid delivery URL: ${url}`);
  if (typeof request.secret !== 'string' || request.secret.length === 0)
    throw new ValidationError('A delivery needs a signing secret');
  if (typeof request.event !== 'string' || !EVENT.test(request.event))
    throw new ValidationError('A delivery event is 1 to 100 letters, digits, ".", "_", ":" or "-"');
  if (
    typeof request.subject !== 'string' ||
    request.subject.length === 0 ||
    request.subject.length > MAX_SUBJECT_LENGTH
  )
    throw new ValidationError(`A delivery subject is 1 to ${MAX_SUBJECT_LENGTH} characters`);
  const body = JSON.stringify(request.body);
  if (body === undefined) throw new ValidationError('A delivery body must be JSON');
  if (Buffer.byteLength(body) > MAX_BODY_BYTES)
    throw new ValidationError(`A delivery body is at most ${MAX_BODY_BYTES} bytes`);
  const schedule = request.schedule ?? CALLBACK_SCHEDULE;
  checkSchedule(schedule);
  return { body, schedule };
}

/**
 * Persists the delivery and enqueues its first attempt; returns the delivery id (sent as X-Agora-Delivery). The URL
 * is expected to have passed checkCallbackUrl when it was registered; the worker applies the address guard again
 * on every attempt. Throws ValidationError for a request that could never be delivered.
 */
export async function enqueueDelivery(deps: DeliveryDeps, request: DeliveryRequest): Promise<string> {
  const { body, schedule } = prepareDelivery(request);
  const id = randomUUID();
  const repository = deliveriesRepository(deps.database);
  await repository.insert({
    id,
    subject: request.subject,
    event: request.event,
    url: request.url,
    secret: request.secret,
    body,
    maxAttempts: schedule.attempts,
    backoffMs: schedule.backoffMs,
  });
  try {
    await enqueueRound(deps.queues, id, 0, schedule, request.requestId);
  } catch (err) {
    // Not accepted, so not kept: a row without a job would stay pending for ever.
    await repository.remove(id).catch(() => {});
    throw err;
  }
  return id;
}

/**
 * The latest delivery for a subject: attempts started so far, the last attempt's HTTP status (null: none yet, or a
 * network error or timeout), and when it was delivered (ISO 8601) or null.
 */
export async function deliveryStatus(
  database: Database,
  subject: string,
): Promise<{ attempts: number; last_status: number | null; delivered_at: string | null } | null> {
  const row = await deliveriesRepository(database).latestForSubject(subject);
  if (!row) return null;
  return { attempts: row.attempts, last_status: row.last_status, delivered_at: row.delivered_at };
}

/**
 * Sends a finished delivery (delivered or given up) again: a new round of attempts on the same schedule, under
 * the same delivery id (receivers that already processed it dedupe on X-Agora-Delivery). The attempt log goes on
 * counting. NotFoundError for an unknown id; ConflictError while the delivery is still being tried.
 */
export async function redeliver(deps: DeliveryDeps, deliveryId: string): Promise<string> {
  const repository = deliveriesRepository(deps.database);
  if (!UUID.test(deliveryId)) throw new NotFoundError('No such delivery');
  const reopened = await repository.reopen(deliveryId);
  if (!reopened) {
    if (await repository.exists(deliveryId))
      throw new ConflictError(
        'This delivery is still being attempted; it can be redelivered once it has ended',
      );
    throw new NotFoundError('No such delivery');
  }
  const schedule = { attempts: reopened.maxAttempts, backoffMs: reopened.backoffMs };
  try {
    await enqueueRound(deps.queues, deliveryId, reopened.round, schedule);
  } catch (err) {
    await repository
      .abandonRound(deliveryId, reopened.round, 'the redelivery could not be enqueued')
      .catch(() => {});
    throw err;
  }
  return deliveryId;
}

export function enqueueRound(
  queues: Pick<Queues, 'enqueue'>,
  deliveryId: string,
  round: number,
  schedule: DeliverySchedule,
  requestId?: string,
) {
  return queues.enqueue(
    'deliveries',
    'deliver',
    { deliveryId, round, ...(requestId === undefined ? {} : { requestId }) },
    { jobId: deliveryJobId(deliveryId, round), ...scheduleJobOptions(schedule) },
  );
}
