import { Type } from 'typebox';
import { CALLBACK_SCHEDULE, scheduleJobOptions } from '../delivery/schedule.js';
import { defineQueue, Unread } from './define.js';

/**
 * Outbound deliveries (list callbacks, Q&A webhooks; shared/delivery). A job carries only the delivery's id and the
 * round it was enqueued for: the URL, secret and body are read from PostgreSQL, where the delivery and its attempt
 * log live. Job id `delivery-<id>-<round>`; attempts and backoff are set per job from the delivery's schedule.
 */
export const deliveriesQueue = defineQueue({
  name: 'deliveries',
  jobs: {
    deliver: {
      deliveryId: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }),
      round: Type.Integer({ minimum: 0 }),
    },
  },
  // Nobody waits for a delivery: its outcome is the attempt log in PostgreSQL.
  results: { deliver: Unread },
  defaultJobOptions: {
    ...scheduleJobOptions(CALLBACK_SCHEDULE),
    removeOnComplete: { age: 3600, count: 1000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  },
});

export const deliveryJobId = (deliveryId: string, round: number): string => `delivery-${deliveryId}-${round}`;
