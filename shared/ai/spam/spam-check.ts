/**
 * spam_check: the naive Bayes verdict on the words, adjusted by forum signals.
 *
 * How the two are combined (also in docs/ai.md):
 *   logit = clamp(naiveBayesLogit, -NB_LOGIT_CAP, +NB_LOGIT_CAP) + Σ signal weights
 *   P(spam) = 1 / (1 + e^-logit);  is_spam = P(spam) >= SPAM_THRESHOLD
 *   confidence = P(spam) when is_spam, else 1 - P(spam)  (the probability of the predicted class)
 *
 * Naive Bayes logits grow with text length and are famously over-confident (independence is
 * assumed between words that are anything but independent); the cap keeps a long, innocent-looking
 * text from drowning out a phone number and three links, while leaving the sign of a confident
 * verdict alone when no forum signal fires.
 */
import { clampText } from '../limits.js';
import { forumSignals, type ForumSignal } from './forum-signals.js';
import type { NaiveBayesModel } from './naive-bayes.js';
import { spamTokens } from './tokenize.js';

export const NB_LOGIT_CAP = 10;
export const SPAM_THRESHOLD = 0.5;

export interface SpamVerdict {
  is_spam: boolean;
  /** Probability of the predicted class, in [0.5, 1] (0 would mean the other class). */
  confidence: number;
}

export interface SpamAnalysis extends SpamVerdict {
  probability: number;
  classifierLogit: number;
  signals: ForumSignal[];
}

export function analyzeSpam(model: NaiveBayesModel, content: string): SpamAnalysis {
  const text = clampText(content);
  const { logit: classifierLogit, knownTokens } = model.score(spamTokens(text));
  const signals = forumSignals(text);
  // With no known word at all the classifier only repeats its prior; treat it as undecided.
  const base = knownTokens === 0 ? 0 : Math.max(-NB_LOGIT_CAP, Math.min(NB_LOGIT_CAP, classifierLogit));
  const logit = signals.reduce((sum, s) => sum + s.weight, base);
  const probability = 1 / (1 + Math.exp(-logit));
  const isSpam = probability >= SPAM_THRESHOLD;
  return {
    is_spam: isSpam,
    confidence: roundProbability(isSpam ? probability : 1 - probability),
    probability,
    classifierLogit,
    signals,
  };
}

export function spamCheck(model: NaiveBayesModel, content: string): SpamVerdict {
  const { is_spam, confidence } = analyzeSpam(model, content);
  return { is_spam, confidence };
}

function roundProbability(p: number): number {
  return Math.round(p * 10_000) / 10_000;
}
