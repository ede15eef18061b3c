/**
 * One outbound delivery mechanism for list callbacks and Q&A webhooks: signed JSON POSTs through the `deliveries`
 * queue, retried with exponential backoff, each attempt logged in PostgreSQL, targets checked by the private-address
 * guard. docs/webhooks.md describes what receivers see.
 */
export {
  enqueueDelivery,
  deliveryStatus,
  redeliver,
  MAX_BODY_BYTES,
  type DeliveryRequest,
  type DeliveryDeps,
} from './deliveries.js';
export { checkCallbackUrl, MAX_URL_LENGTH, type Resolve } from './target.js';
export { signPayload, verifySignature, SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECONDS } from './signature.js';
export { CALLBACK_SCHEDULE, WEBHOOK_SCHEDULE, type DeliverySchedule } from './schedule.js';
export { DELIVERY_HEADER, EVENT_HEADER, ATTEMPT_HEADER } from './attempt.js';
export { recordDelivery, handOver, handOverPending, OUTBOX_GRACE_MS, type OutboxDeps } from './outbox.js';
