import { ServiceUnavailableError } from '../../../shared/errors.js';

/**
 * How many list uploads one process writes at once. Each holds a database connection (its rows go in one
 * transaction as they arrive) for as long as its client takes to send them, so uploads alone must never take the
 * whole pool: the other routes, key checks included, keep their connections however many slow clients upload.
 */
export const UPLOAD_SLOTS = 3;
/** How long an upload waits for a slot before it is answered 503 (its client may retry). */
export const UPLOAD_SLOT_WAIT_MS = 30_000;

export interface UploadSlots {
  /** Resolves with the slot's release once one is free; a 503 past the wait. */
  acquire(): Promise<() => void>;
}

export function createUploadSlots(slots = UPLOAD_SLOTS, waitMs = UPLOAD_SLOT_WAIT_MS): UploadSlots {
  let free = slots;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  const releaseOnce = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  };
  return {
    async acquire() {
      if (free > 0) {
        free--;
        return releaseOnce();
      }
      await new Promise<void>((resolve, reject) => {
        const grant = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(grant), 1);
          reject(new ServiceUnavailableError('Too many list uploads in progress; try again shortly'));
        }, waitMs);
        waiting.push(grant);
      });
      return releaseOnce();
    },
  };
}
