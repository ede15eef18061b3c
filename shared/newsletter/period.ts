import type { Frequency } from './frequency.js';

/**
 * Digest periods are calendar periods in UTC: a day, an ISO week (Monday to Sunday) or a month. The digest
 * sent at a given moment covers the last period that is complete at that moment, so a digest sent at 07:00 on
 * Monday covers the whole previous week and questions asked between midnight and 07:00 fall in the next one.
 * A period's key names it by frequency and start (`daily-2024-05-09`, `weekly-2024-05-06`, `monthly-2024-04`);
 * together with the subscriber it is the business key of a send.
 */

export interface Period {
  key: string;
  frequency: Frequency;
  /** Inclusive. */
  start: Date;
  /** Exclusive. */
  end: Date;
}

const DAY = 24 * 3600 * 1000;
const isoDate = (d: Date) => d.toISOString().slice(0, 10);

function keyOf(frequency: Frequency, start: Date): string {
  return `${frequency}-${frequency === 'monthly' ? isoDate(start).slice(0, 7) : isoDate(start)}`;
}

function periodStarting(frequency: Frequency, start: Date): Period {
  const end =
    frequency === 'daily'
      ? new Date(start.getTime() + DAY)
      : frequency === 'weekly'
        ? new Date(start.getTime() + 7 * DAY)
        : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return { key: keyOf(frequency, start), frequency, start, end };
}

/** The last complete period of this frequency before `at`. */
export function periodBefore(frequency: Frequency, at: Date): Period {
  const today = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (frequency === 'daily') return periodStarting('daily', new Date(today - DAY));
  if (frequency === 'weekly') {
    const sinceMonday = (new Date(today).getUTCDay() + 6) % 7;
    return periodStarting('weekly', new Date(today - (sinceMonday + 7) * DAY));
  }
  return periodStarting('monthly', new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1)));
}

/** The period a key names, or null when the key is malformed (a weekly key must start on a Monday). */
export function parsePeriod(key: string): Period | null {
  const match =
    /^(daily|weekly)-(\d{4})-(\d{2})-(\d{2})$/.exec(key) ?? /^(monthly)-(\d{4})-(\d{2})$/.exec(key);
  if (!match) return null;
  const frequency = match[1] as Frequency;
  const [year, month, day] = [Number(match[2]), Number(match[3]), Number(match[4] ?? '1')];
  const start = new Date(Date.UTC(year, month - 1, day));
  if (start.getUTCFullYear() !== year || start.getUTCMonth() !== month - 1 || start.getUTCDate() !== day)
    return null;
  if (frequency === 'weekly' && start.getUTCDay() !== 1) return null;
  return periodStarting(frequency, start);
}
