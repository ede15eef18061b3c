/**
 * quality_check → { score, issues }.
 *
 * Input: `content` (the post) and an optional `title`. Without a title, a content whose first line
 * is short (≤ 150 characters) and followed by a blank line is read as "title, blank line, body" —
 * the shape the web app produces when it sends a question as one string. Otherwise there is no
 * title and only the body rules apply.
 *
 * score = 100 − the weights of the issues found (rules.ts), clamped to 0..100, an integer.
 */
import { AI_MAX_TITLE_LENGTH, clampText } from '../limits.js';
import { htmlToText, looksLikeHtml } from '../text/html-to-text.js';
import { scanCode } from './code-detect.js';
import { readability, type Readability } from './readability.js';
import { issue, localIssues, QUALITY_THRESHOLDS, scoreFromIssues, type QualityIssue } from './rules.js';

export interface SimilarQuestion {
  id: number | string;
  title: string;
  /** In [0, 1]; 1 means identical. */
  similarity: number;
}

/**
 * Full-text similarity against the site's questions, injected (PostgreSQL in production). It is
 * given a title-like string: the title when known, else the start of the body.
 */
export type FindSimilarQuestions = (text: string) => Promise<SimilarQuestion[]>;

export interface QualityResult {
  score: number;
  issues: QualityIssue[];
}

export interface QualityAnalysis extends QualityResult {
  title: string | null;
  readability: Readability;
  similar: SimilarQuestion[];
}

export interface QualityDeps {
  findSimilarQuestions?: FindSimilarQuestions;
  /** Called when the duplicate lookup fails; the check then goes on without that rule. */
  onLookupError?: (error: unknown) => void;
}

export function splitTitle(content: string, title?: string | null): { title: string | null; body: string } {
  const given = title?.trim();
  if (given) return { title: clampText(given, AI_MAX_TITLE_LENGTH), body: content };
  const match = /^([^\n]{1,150})\n[ \t]*\n([\s\S]*\S[\s\S]*)$/.exec(
    content.replace(/\r\n?/g, '\n').trimStart(),
  );
  return match
    ? { title: (match[1] as string).trim(), body: match[2] as string }
    : { title: null, body: content };
}

export async function analyzeQuality(
  content: string,
  title: string | null | undefined,
  deps: QualityDeps,
): Promise<QualityAnalysis> {
  const raw = clampText(content);
  const text = looksLikeHtml(raw) ? htmlToText(raw) : raw;
  const parts = splitTitle(text, title);
  const code = scanCode(parts.body);
  const stats = readability(code.prose);

  if (stats.words === 0 && !code.hasFormattedCode) {
    return { score: 0, issues: [issue('empty')], title: parts.title, readability: stats, similar: [] };
  }

  const issues = localIssues({ title: parts.title, body: parts.body, code, readability: stats });
  const similar = await lookupSimilar(
    parts.title ?? code.prose.trim().slice(0, QUALITY_THRESHOLDS.titleMaxChars),
    deps,
  );
  const duplicate = similar.find((q) => q.similarity >= QUALITY_THRESHOLDS.duplicateSimilarity);
  if (duplicate) {
    issues.push(
      issue(
        'possible_duplicate',
        `A similar question already exists: #${duplicate.id} "${duplicate.title}".`,
      ),
    );
  }
  return { score: scoreFromIssues(issues), issues, title: parts.title, readability: stats, similar };
}

export async function qualityCheck(
  content: string,
  title: string | null | undefined,
  deps: QualityDeps,
): Promise<QualityResult> {
  const { score, issues } = await analyzeQuality(content, title, deps);
  return { score, issues };
}

async function lookupSimilar(text: string, deps: QualityDeps): Promise<SimilarQuestion[]> {
  if (!deps.findSimilarQuestions || text.trim() === '') return [];
  try {
    const found = await deps.findSimilarQuestions(text);
    return [...found].sort((a, b) => b.similarity - a.similarity);
  } catch (error) {
    // A slow or broken search must not fail the whole check; the other rules still stand.
    deps.onLookupError?.(error);
    return [];
  }
}
