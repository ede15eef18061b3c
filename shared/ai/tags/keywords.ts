/**
 * Keyword extraction with wink-nlp: content words weighted by part of speech and frequency.
 * Nouns and proper nouns name what a post is about ("stout", "Guinness"); adjectives and verbs
 * help less ("dark", "brew"), which the weights reflect.
 */
import { wordTokens } from '../text/nlp.js';

const POS_WEIGHT: Record<string, number> = { PROPN: 1, NOUN: 1, X: 0.8, ADJ: 0.6, VERB: 0.4 };

export interface Keyword {
  /** Lower-cased form as first written. */
  term: string;
  stem: string;
  weight: number;
}

export function extractKeywords(text: string, limit = 15): Keyword[] {
  const byStem = new Map<string, Keyword>();
  for (const token of wordTokens(text)) {
    const posWeight = POS_WEIGHT[token.pos];
    if (posWeight === undefined || token.stopWord || token.stem.length < 2) continue;
    const existing = byStem.get(token.stem);
    if (existing) existing.weight += posWeight;
    else byStem.set(token.stem, { term: token.normal, stem: token.stem, weight: posWeight });
  }
  return [...byStem.values()]
    .sort((a, b) => b.weight - a.weight || (a.stem < b.stem ? -1 : 1))
    .slice(0, limit);
}

/**
 * Stems of a tag name ("low-alcohol" → ["low", "alcohol"]), without part-of-speech filtering:
 * a tag name out of context is too short for the tagger to be trusted.
 */
export function tagNameStems(name: string): string[] {
  return [
    ...new Set(
      wordTokens(name.replace(/[-_]+/g, ' '))
        .filter((t) => !t.stopWord)
        .map((t) => t.stem),
    ),
  ];
}
