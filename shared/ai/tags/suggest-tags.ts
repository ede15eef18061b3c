/**
 * suggest_tags: existing tags only, ranked by two pieces of evidence.
 *
 *   neighbours — the K questions most similar to the post (BM25 over title + body) vote for their
 *                tags, each vote weighted by its BM25 score; a tag's share of the votes is in [0,1].
 *   keywords   — the share of a tag's name (stemmed) that appears among the post's keywords, each
 *                word weighted by how specific it is on the site (a "beer" match on a beer site
 *                says little; a "trappist" match says a lot).
 *
 *   score = NEIGHBOUR_WEIGHT · neighbours + KEYWORD_WEIGHT · keywords, kept when ≥ MIN_TAG_SCORE.
 *
 * Weights were chosen on the beer dump with bin/eval-tags.ts (figures in docs/ai.md).
 */
import { AI_DEFAULT_TAG_LIMIT, AI_MAX_TAG_LIMIT, clampText } from '../limits.js';
import { htmlToText, looksLikeHtml } from '../text/html-to-text.js';
import { contentStems } from '../text/nlp.js';
import { extractKeywords, tagNameStems } from './keywords.js';
import type { TagIndex } from './tag-index.js';

export const NEIGHBOURS = 20;
export const NEIGHBOUR_WEIGHT = 0.7;
export const KEYWORD_WEIGHT = 0.3;
export const MIN_TAG_SCORE = 0.05;

export interface SuggestedTag {
  name: string;
  slug: string;
  /** In [0, 1], three decimals. */
  score: number;
}

/** Tag-name stems are computed once per index, not per request. */
const tagStemCache = new WeakMap<TagIndex, string[][]>();

function tagStems(index: TagIndex): string[][] {
  let stems = tagStemCache.get(index);
  if (!stems) {
    stems = index.tags.map((t) => tagNameStems(t.name));
    tagStemCache.set(index, stems);
  }
  return stems;
}

export function suggestTags(
  index: TagIndex | null | undefined,
  content: string,
  limit = AI_DEFAULT_TAG_LIMIT,
): SuggestedTag[] {
  if (!index || index.size === 0) return [];
  const text = clampText(looksLikeHtml(content) ? htmlToText(content) : content);
  const max = Math.max(1, Math.min(AI_MAX_TAG_LIMIT, Math.floor(limit)));

  const scores = new Map<number, number>();
  const add = (tag: number, value: number): void => {
    scores.set(tag, (scores.get(tag) ?? 0) + value);
  };

  const neighbours = index.search(contentStems(text), NEIGHBOURS);
  const totalVotes = neighbours.reduce((sum, n) => sum + n.score, 0);
  if (totalVotes > 0) {
    for (const { doc, score } of neighbours) {
      for (const tag of index.docTags(doc)) add(tag, (NEIGHBOUR_WEIGHT * score) / totalVotes);
    }
  }

  const keywordStems = new Set(extractKeywords(text, 50).map((k) => k.stem));
  tagStems(index).forEach((stems, tag) => {
    if (stems.length === 0) return;
    const matched = stems
      .filter((s) => keywordStems.has(s))
      .reduce((sum, s) => sum + index.specificity(s), 0);
    if (matched > 0) add(tag, (KEYWORD_WEIGHT * matched) / stems.length);
  });

  return [...scores.entries()]
    .filter(([, score]) => score >= MIN_TAG_SCORE)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, max)
    .map(([tag, score]) => {
      const ref = index.tags[tag] as { name: string; slug: string };
      return { name: ref.name, slug: ref.slug, score: Math.round(Math.min(1, score) * 1000) / 1000 };
    });
}
