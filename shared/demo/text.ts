import type { Random } from './prng.js';
import { COMMON_WORD, COMMON_WORDS, RARE_WORD, type Topic } from './topics.js';

/**
 * Sentences from templates filled with a topic's words. Not literature, but enough variety that titles
 * read like questions, bodies have paragraphs, and search ranking has something to rank.
 */
type Words = { noun: () => string; verb: () => string; adj: () => string; common: () => string };

const words = (random: Random, topic: Topic): Words => ({
  noun: () => random.skewed(topic.nouns),
  verb: () => random.pick(topic.verbs),
  adj: () => random.pick(topic.adjectives),
  common: () => random.pick(COMMON_WORDS),
});

const TITLES: Array<(w: Words) => string> = [
  (w) => `How do I ${w.verb()} the ${w.noun()} without making it ${w.adj()}?`,
  (w) => `Why is my ${w.noun()} ${w.adj()} after I ${w.verb()} it?`,
  (w) => `What is the ${w.common()} between ${article(w.noun())} and ${article(w.noun())}?`,
  (w) => `Is it safe to ${w.verb()} with ${article(w.adj())} ${w.noun()}?`,
  (w) => `Best way to ${w.verb()} when the ${w.noun()} is ${w.adj()}`,
  (w) => `Does the ${w.noun()} affect how long it takes to ${w.verb()}?`,
  (w) => `${w.adj()[0]!.toUpperCase()}${w.adj().slice(1)} ${w.noun()}: what am I doing wrong?`,
  (w) => `When should I ${w.verb()} the ${w.noun()}?`,
  (w) => `Can I replace the ${w.noun()} with ${article(w.noun())}?`,
  (w) => `How much ${w.noun()} do I need to ${w.verb()} properly?`,
];

const QUESTION_SENTENCES: Array<(w: Words) => string> = [
  (w) => `I have been trying to ${w.verb()} for a few weeks, but the ${w.noun()} always ends up ${w.adj()}.`,
  (w) => `I followed the usual advice about the ${w.noun()} and the ${w.noun()}, and nothing changed.`,
  (w) => `My ${w.noun()} is fairly new, so I doubt that is the ${w.common()}.`,
  (w) => `Is there a rule of thumb for the ${w.noun()}, or is it all trial and error?`,
  () => `Everything is kept at room ${COMMON_WORD}, in case that matters.`,
  (w) => `A friend told me to ${w.verb()} earlier, but I could not find any source for that.`,
  (w) =>
    `As a ${w.common() === 'beginner' ? 'complete beginner' : 'beginner'}, I am not sure which ${w.noun()} to trust.`,
  (w) => `The last time I tried to ${w.verb()}, the ${w.noun()} was ${w.adj()} and I had to start again.`,
];

const ANSWER_SENTENCES: Array<(w: Words) => string> = [
  (w) => `The usual ${w.common()} is the ${w.noun()}: if it is ${w.adj()}, everything after it suffers.`,
  (w) => `Try to ${w.verb()} a little later, and check the ${w.noun()} before you do.`,
  (w) => `In my experience the ${w.noun()} matters much more than the ${w.noun()}.`,
  (w) => `Keep an eye on the ${COMMON_WORD}; small changes make a big ${w.common()}.`,
  (w) => `I would not worry about the ${w.noun()} until you can ${w.verb()} consistently.`,
  (w) => `A cheap ${w.noun()} works fine here; the expensive ones mostly help with the ${w.noun()}.`,
  (w) => `Whatever you do, do not ${w.verb()} ${article(w.adj())} ${w.noun()}: it only gets worse.`,
  (w) => `The manuals disagree, but most people ${w.verb()} once and then leave the ${w.noun()} alone.`,
];

const COMMENTS: Array<(w: Words) => string> = [
  (w) => `Which ${w.noun()} are you using?`,
  () => `Thanks, that fixed it for me.`,
  (w) => `Could you add a photo of the ${w.noun()}?`,
  (w) => `This worked, although I had to ${w.verb()} twice.`,
  (w) => `Is the ${w.noun()} ${w.adj()} before or after you ${w.verb()}?`,
  () => `Good answer, but a source would make it better.`,
  (w) => `Same ${w.common()} here with ${article(w.adj())} ${w.noun()}.`,
];

// Distinct templates within a paragraph, so no sentence repeats itself word for word.
const sentences = (random: Random, w: Words, pool: typeof TITLES, n: number) =>
  random
    .sample(pool, n)
    .map((template) => template(w))
    .join(' ');

/** "a" or "an" before a word, by its first letter (good enough for the vocabulary used here). */
const article = (word: string) => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);

/** Paragraphs of 2–4 sentences; now and then the rare word, so a search for it finds only a few posts. */
function body(random: Random, w: Words, pool: typeof TITLES, paragraphs: number): string {
  const parts = Array.from({ length: paragraphs }, () => sentences(random, w, pool, random.int(2, 4)));
  if (random.chance(0.0005)) parts.push(`It feels a bit ${RARE_WORD}, but I wanted to ask anyway.`);
  return parts.join('\n\n');
}

export const questionTitle = (random: Random, topic: Topic) => random.pick(TITLES)(words(random, topic));
export const questionBody = (random: Random, topic: Topic) =>
  body(random, words(random, topic), QUESTION_SENTENCES, random.int(1, 3));
export const answerBody = (random: Random, topic: Topic) =>
  body(random, words(random, topic), ANSWER_SENTENCES, random.int(1, 3));
export const commentText = (random: Random, topic: Topic) => random.pick(COMMENTS)(words(random, topic));
