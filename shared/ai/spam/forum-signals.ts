/**
 * Hand-weighted signals for forum spam that an e-mail corpus under-represents: link stuffing,
 * stretched characters, contact details (phone numbers, addresses, messenger names) and shouting.
 *
 * Each signal adds log-odds to the naive Bayes logit (see spam-check.ts). Weights are in natural
 * log-odds units: +1 multiplies the odds of spam by e ≈ 2.7. They are priors from moderation
 * practice, not fitted, because the SpamAssassin corpus is e-mail (where every message carries
 * links and addresses) and fitting them there would teach the wrong lesson; docs/ai.md lists them.
 */

export interface ForumSignal {
  code: 'link_density' | 'repeated_characters' | 'contact_info' | 'all_caps';
  /** The measured value (a ratio or a count), for explanations and tests. */
  value: number;
  /** Log-odds added to the classifier's logit. */
  weight: number;
}

const LINK_RE =
  /\b(?:https?:\/\/|www\.)[^\s<>"']+|\b[a-z0-9-]{2,}\.(?:com|net|org|info|biz|ru|cn|xyz|top|io|co|shop|online|site)\b/gi;
const EMAIL_RE = /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/;
// Nine or more digits with the usual separators: long enough to skip years, ABV and IBU figures.
const PHONE_RE = /(?:\+|\b)\d(?:[\s().-]*\d){8,14}\b/;
const MESSENGER_RE =
  /\b(?:whats\s?app|telegram|wechat|viber|skype|kik|snapchat|signal me|dm me|text me|call now|call us|contact us)\b/i;
const RUN_RE = /(.)\1{3,}/gu;
const WORD_RE = /[\p{L}\p{N}]+/gu;

export function forumSignals(text: string): ForumSignal[] {
  const signals: ForumSignal[] = [];
  const words = text.match(WORD_RE)?.length ?? 0;

  const links = text.match(LINK_RE)?.length ?? 0;
  if (links > 0) {
    const density = links / Math.max(words, 1);
    // One link in a long answer is normal; links making up a tenth of the words are not.
    const weight = density >= 0.1 ? 2.5 : density >= 0.04 ? 1.25 : 0.25;
    signals.push({ code: 'link_density', value: round(density), weight: weight + (links >= 3 ? 1 : 0) });
  }

  // Runs such as "!!!!", "$$$$" or "sooooo"; whitespace, digits and markdown rules do not count.
  const runs = [...text.matchAll(RUN_RE)].filter((m) => !/[\s\d=\-_*#~`.]/u.test(m[1] ?? ' ')).length;
  if (runs > 0)
    signals.push({ code: 'repeated_characters', value: runs, weight: Math.min(1.5, 0.75 * runs) });

  const contacts = [EMAIL_RE.test(text), PHONE_RE.test(text), MESSENGER_RE.test(text)].filter(Boolean).length;
  if (contacts > 0)
    signals.push({ code: 'contact_info', value: contacts, weight: Math.min(4, 2 * contacts) });

  const caps = capsRatio(text);
  if (caps >= 0.3) signals.push({ code: 'all_caps', value: round(caps), weight: caps >= 0.5 ? 1.5 : 0.5 });

  return signals;
}

/** Upper-case share of the letters, ignoring texts too short to judge (acronyms like "IPA"). */
export function capsRatio(text: string, minLetters = 20): number {
  const letters = text.match(/\p{L}/gu) ?? [];
  if (letters.length < minLetters) return 0;
  const upper = letters.filter((c) => c !== c.toLowerCase() && c === c.toUpperCase()).length;
  return upper / letters.length;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
