/**
 * quality_check rules. Each rule has a code, a fixed deduction from 100 and a message that tells
 * the author what to do. The table is the documentation: docs/ai.md repeats it.
 */
import { capsRatio } from '../spam/forum-signals.js';
import { contentStems } from '../text/nlp.js';
import type { CodeScan } from './code-detect.js';
import type { Readability } from './readability.js';

export interface QualityIssue {
  code: string;
  message: string;
}

export const QUALITY_RULES = {
  empty: { weight: 100, message: 'The post has no text.' },
  too_short: { weight: 30, message: 'The post is very short; add the details someone needs to answer it.' },
  short: { weight: 15, message: 'The post is short; say what you tried or what you already know.' },
  too_long: { weight: 10, message: 'The post is very long; trim it to what is needed to answer.' },
  hard_to_read: { weight: 15, message: 'The text is hard to read; use shorter sentences and simpler words.' },
  fairly_hard_to_read: {
    weight: 5,
    message: 'The text is fairly hard to read; shorter sentences would help.',
  },
  long_sentences: { weight: 10, message: 'Sentences are long on average; split them up.' },
  wall_of_text: { weight: 5, message: 'A long post without paragraphs; break it into paragraphs.' },
  title_too_short: { weight: 10, message: 'The title is too short to tell what the question is about.' },
  title_body_mismatch: {
    weight: 15,
    message: 'The title and the body share no keywords; make sure they ask the same thing.',
  },
  missing_question_mark: { weight: 10, message: 'No question mark: state the question you want answered.' },
  unformatted_code: {
    weight: 15,
    message: 'Code appears outside a code block; wrap it in ``` fences or backticks.',
  },
  all_caps: { weight: 25, message: 'Much of the text is in capital letters, which reads as shouting.' },
  excessive_punctuation: {
    weight: 5,
    message: 'Repeated punctuation such as "!!!" or "???"; one mark is enough.',
  },
  possible_duplicate: { weight: 25, message: 'A similar question already exists' },
} as const satisfies Record<string, { weight: number; message: string }>;

export type QualityRuleCode = keyof typeof QUALITY_RULES;

/** Thresholds, named so that docs and tests can cite them. */
export const QUALITY_THRESHOLDS = {
  tooShortWords: 15,
  shortWords: 30,
  tooLongWords: 2000,
  hardFlesch: 30,
  fairlyHardFlesch: 50,
  /** Readability is noise on a couple of sentences; judge it from this many words up. */
  readabilityMinWords: 30,
  longSentenceWords: 30,
  wallOfTextWords: 250,
  titleMinWords: 4,
  titleMaxChars: 150,
  codeLines: 2,
  capsRatio: 0.5,
  duplicateSimilarity: 0.6,
} as const;

export interface QualityFacts {
  title: string | null;
  body: string;
  code: CodeScan;
  readability: Readability;
}

export function issue(code: QualityRuleCode, message?: string): QualityIssue {
  return { code, message: message ?? QUALITY_RULES[code].message };
}

/** Every rule that needs no I/O; the duplicate rule lives in quality-check.ts. */
export function localIssues(facts: QualityFacts): QualityIssue[] {
  const t = QUALITY_THRESHOLDS;
  const { readability: r, title, body } = facts;
  const issues: QualityIssue[] = [];

  if (r.words < t.tooShortWords) issues.push(issue('too_short'));
  else if (r.words < t.shortWords) issues.push(issue('short'));
  if (r.words > t.tooLongWords) issues.push(issue('too_long'));

  if (r.words >= t.readabilityMinWords) {
    if (r.fleschReadingEase < t.hardFlesch) issues.push(issue('hard_to_read'));
    else if (r.fleschReadingEase < t.fairlyHardFlesch) issues.push(issue('fairly_hard_to_read'));
    if (r.averageSentenceLength > t.longSentenceWords) issues.push(issue('long_sentences'));
  }
  if (r.words > t.wallOfTextWords && !/\n\s*\n/.test(facts.code.prose.trim()))
    issues.push(issue('wall_of_text'));

  if (title !== null) {
    const titleWords = title.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
    if (titleWords < t.titleMinWords) issues.push(issue('title_too_short'));
    const titleStems = new Set(contentStems(title));
    const bodyStems = new Set(contentStems(facts.code.prose));
    const shared = [...titleStems].some((s) => bodyStems.has(s));
    if (titleStems.size >= 2 && r.words >= t.shortWords && !shared) issues.push(issue('title_body_mismatch'));
  }

  if (!`${title ?? ''}\n${body}`.includes('?')) issues.push(issue('missing_question_mark'));
  if (facts.code.unformattedCodeLines >= t.codeLines) issues.push(issue('unformatted_code'));

  const shouting =
    capsRatio(facts.code.prose) >= t.capsRatio || (title !== null && capsRatio(title, 8) >= 0.7);
  if (shouting) issues.push(issue('all_caps'));
  if (/([!?])\1{2,}/.test(`${title ?? ''}\n${body}`)) issues.push(issue('excessive_punctuation'));

  return issues;
}

export function scoreFromIssues(issues: readonly QualityIssue[]): number {
  const deduction = issues.reduce(
    (sum, i) => sum + (QUALITY_RULES[i.code as QualityRuleCode]?.weight ?? 0),
    0,
  );
  return Math.max(0, Math.min(100, Math.round(100 - deduction)));
}
