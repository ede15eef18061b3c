/**
 * Input limits of the AI engine, in one place so that the HTTP endpoint and the engine agree.
 *
 * The endpoint must reject longer input with a 400 (it is the only layer that can answer the
 * client); the engine also truncates to the same length as a second guard, because every
 * analysis below is at least linear in the text and a worker must never spend unbounded CPU on
 * one job.
 */

/** Maximum accepted length, in UTF-16 code units, of `content` (and of a chat `message`). */
export const AI_MAX_CONTENT_LENGTH = 20_000;

/** Maximum accepted length of the optional `title` given to quality_check. */
export const AI_MAX_TITLE_LENGTH = 300;

/** Default and maximum number of tags suggest_tags returns. */
export const AI_DEFAULT_TAG_LIMIT = 5;
export const AI_MAX_TAG_LIMIT = 20;

/** Default time given to an external chat provider before the local reply is used instead. */
export const AI_PROVIDER_TIMEOUT_MS = 15_000;

export function clampText(text: string, max: number = AI_MAX_CONTENT_LENGTH): string {
  return text.length > max ? text.slice(0, max) : text;
}
