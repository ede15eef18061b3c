/**
 * Flesch reading ease from sentence, word and syllable counts:
 *   206.835 − 1.015 · (words / sentences) − 84.6 · (syllables / words)
 * 60–70 is plain English, below 30 is very hard (legal text). Sentences and words come from
 * wink-nlp; syllables from a vowel-group heuristic, which is within one syllable for most English
 * words and good enough for a score that is only compared against broad bands.
 */
import { nlp } from '../text/nlp.js';

export interface Readability {
  sentences: number;
  words: number;
  syllables: number;
  /** Words per sentence. */
  averageSentenceLength: number;
  /** Flesch reading ease, clamped to [0, 121] (121 is the formula's maximum). */
  fleschReadingEase: number;
}

export function readability(text: string): Readability {
  const doc = nlp().readDoc(text);
  const { its } = nlp();
  const sentences = Math.max(1, doc.sentences().length());
  const words = doc
    .tokens()
    .out(its.type)
    .map((type, i) => ({ type, i }))
    .filter((t) => t.type === 'word');
  const values = doc.tokens().out();
  let syllables = 0;
  for (const { i } of words) syllables += countSyllables(values[i] ?? '');
  const wordCount = words.length;
  const averageSentenceLength = wordCount / sentences;
  const raw = wordCount === 0 ? 0 : 206.835 - 1.015 * averageSentenceLength - 84.6 * (syllables / wordCount);
  return {
    sentences,
    words: wordCount,
    syllables,
    averageSentenceLength: Math.round(averageSentenceLength * 10) / 10,
    fleschReadingEase: Math.round(Math.max(0, Math.min(121, raw)) * 10) / 10,
  };
}

export function countSyllables(word: string): number {
  let w = word.toLowerCase().replace(/[^a-z]/g, '');
  if (w.length === 0) return 0;
  if (w.length <= 3) return 1;
  // Silent endings: "make", "hoped", "bottles" are one syllable shorter than their vowel groups.
  w = w.replace(/(?:[^laeiouy]es|[^laeiouy]ed|[^laeiouy]e)$/, (m) => m.slice(0, 1)).replace(/^y/, '');
  const groups = w.match(/[aeiouy]+/g)?.length ?? 0;
  return Math.max(1, groups);
}
