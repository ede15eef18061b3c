import { ValidationError } from '../errors.js';

/**
 * The rules a post must meet before it is written, with messages a client can show as they are. Lengths count
 * characters (Unicode code points) after trimming, as a person would count them, not UTF-16 units or bytes.
 */

export const LIMITS = {
  title: { min: 15, max: 150 },
  content: { min: 30, max: 30_000 },
  comment: { min: 15, max: 600 },
  tags: { min: 1, max: 5 },
  tagName: { max: 35 },
} as const;

// Stack Exchange's tag alphabet: lower-case letters, digits and + # . - (c#, c++, .net, all-grain).
const TAG_NAME = /^[a-z0-9+#.][a-z0-9+#.-]*$/;

const length = (text: string) => [...text].length;

function bounded(field: string, value: string, { min, max }: { min: number; max: number }): string {
  const trimmed = value.trim();
  const n = length(trimmed);
  if (n < min) throw new ValidationError(`${field} must be at least ${min} characters (got ${n})`);
  if (n > max) throw new ValidationError(`${field} must be at most ${max} characters (got ${n})`);
  return trimmed;
}

/** A title on one line: runs of whitespace (newlines included) become one space. */
export const checkTitle = (title: string): string =>
  bounded('Title', title.replace(/\s+/g, ' '), LIMITS.title);

export const checkContent = (content: string): string => bounded('Content', content, LIMITS.content);

export const checkComment = (content: string): string => bounded('Comment', content, LIMITS.comment);

/**
 * Tag names as given by a client: trimmed, lower-cased, inner spaces turned into hyphens (as Stack Exchange
 * does), duplicates dropped keeping the first order; 1 to 5 of them, each in the tag alphabet.
 */
export function normaliseTags(tags: string[]): string[] {
  const names: string[] = [];
  for (const raw of tags) {
    const name = raw.trim().toLowerCase().replace(/\s+/g, '-');
    if (name === '') throw new ValidationError('Tags must not be empty');
    if (length(name) > LIMITS.tagName.max)
      throw new ValidationError(`Tag "${name}" is longer than ${LIMITS.tagName.max} characters`);
    if (!TAG_NAME.test(name))
      throw new ValidationError(`Tag "${name}" may only contain a-z, 0-9, +, #, . and -`);
    if (!names.includes(name)) names.push(name);
  }
  if (names.length < LIMITS.tags.min) throw new ValidationError('A question needs at least 1 tag');
  if (names.length > LIMITS.tags.max)
    throw new ValidationError(`A question may have at most ${LIMITS.tags.max} tags (got ${names.length})`);
  return names;
}
