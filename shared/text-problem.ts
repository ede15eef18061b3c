/**
 * What PostgreSQL text cannot hold: a NUL character ("invalid byte sequence for encoding UTF8: 0x00") or a lone
 * UTF-16 surrogate (no UTF-8 form). The request text rule (services/http/text-rule.ts) refuses both in every string a
 * request carries; values decoded from inside a request (a cursor's keys) are checked with the same function.
 */

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string breaks the rule, or undefined. */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'is not valid Unicode (it holds a lone surrogate)';
  return undefined;
}
