import { ValidationError } from '../errors.js';

/** What a poll may look like; the HTTP schema and the admin CLI both check through here. */
export const POLL_LIMITS = {
  titleMax: 300,
  optionsMin: 2,
  optionsMax: 20,
  optionTextMax: 200,
} as const;

export interface NewPoll {
  title: string;
  options: string[];
  questionId?: number | null;
  allowChange?: boolean;
  /** A deadline: from this instant the poll is closed. */
  closesAt?: Date | null;
  authorId?: number | null;
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Trims the title and options and refuses what a voter could not tell apart (blank or duplicate options). */
export function normalisePoll(input: NewPoll): NewPoll & { allowChange: boolean } {
  const title = collapse(input.title);
  if (title.length === 0 || title.length > POLL_LIMITS.titleMax) {
    throw new ValidationError(`title must be 1 to ${POLL_LIMITS.titleMax} characters`);
  }
  const options = input.options.map(collapse);
  if (options.length < POLL_LIMITS.optionsMin || options.length > POLL_LIMITS.optionsMax) {
    throw new ValidationError(`a poll has ${POLL_LIMITS.optionsMin} to ${POLL_LIMITS.optionsMax} options`);
  }
  const bad = options.find((o) => o.length === 0 || o.length > POLL_LIMITS.optionTextMax);
  if (bad !== undefined)
    throw new ValidationError(`each option must be 1 to ${POLL_LIMITS.optionTextMax} characters`);
  const seen = new Set<string>();
  for (const option of options) {
    const key = option.toLowerCase();
    if (seen.has(key)) throw new ValidationError(`duplicate option "${option}"`);
    seen.add(key);
  }
  if (input.closesAt && Number.isNaN(input.closesAt.getTime()))
    throw new ValidationError('closes_at is not a valid date');
  return { ...input, title, options, allowChange: input.allowChange ?? false };
}

/** closed_at is both "closed by hand" (a past instant) and a deadline (a future one). */
export const isClosed = (closedAt: Date | null, now = new Date()): boolean =>
  closedAt !== null && closedAt.getTime() <= now.getTime();
