import type { JobsOptions } from 'bullmq';
import { ValidationError } from '../errors.js';

/**
 * When a delivery is tried again. Attempt n+1 waits about backoffMs · 2^(n−1) after attempt n failed (BullMQ's
 * exponential backoff, with up to 20 % taken off at random so that a receiver's outage does not bring every
 * delivery back at the same instant). The total wait before the last attempt is at most backoffMs · (2^(attempts−1) − 1).
 */
export interface DeliverySchedule {
  /** HTTP attempts in all, the first included. */
  attempts: number;
  /** Wait before the second attempt; each later wait doubles. */
  backoffMs: number;
}

// 170 s doubling: 8 attempts end ~6 h after the first (170 s · 127), 10 attempts ~24 h (170 s · 511).
const BASE_BACKOFF_MS = 170_000;

/** List callbacks: the list's owner is waiting for them; after ~6 hours the result is fetched by polling instead. */
export const CALLBACK_SCHEDULE: DeliverySchedule = { attempts: 8, backoffMs: BASE_BACKOFF_MS };

/** Q&A webhooks: a receiver may be down for a deploy or a night; tried for ~24 hours. */
export const WEBHOOK_SCHEDULE: DeliverySchedule = { attempts: 10, backoffMs: BASE_BACKOFF_MS };

const MAX_ATTEMPTS = 20;
const MAX_BACKOFF_MS = 24 * 3600 * 1000;
const JITTER = 0.2;

export function checkSchedule(schedule: DeliverySchedule): void {
  const { attempts, backoffMs } = schedule;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS)
    throw new ValidationError(`Delivery attempts must be an integer from 1 to ${MAX_ATTEMPTS}`);
  if (!Number.isInteger(backoffMs) || backoffMs < 0 || backoffMs > MAX_BACKOFF_MS)
    throw new ValidationError(`Delivery backoff must be an integer from 0 to ${MAX_BACKOFF_MS} ms`);
}

/** The BullMQ options of one delivery job. */
export function scheduleJobOptions(schedule: DeliverySchedule): Pick<JobsOptions, 'attempts' | 'backoff'> {
  return {
    attempts: schedule.attempts,
    backoff: { type: 'exponential', delay: schedule.backoffMs, jitter: JITTER },
  };
}
