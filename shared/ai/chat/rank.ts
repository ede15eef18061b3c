/**
 * Ranks retrieved posts for a chat message and picks their best sentences. Retrieval (full-text
 * search) already filtered by words; ranking adds what makes an answer worth quoting: it is an
 * answer rather than a question, accepted, and voted up.
 */
import { htmlToText, looksLikeHtml } from '../text/html-to-text.js';
import { contentStems, splitSentences, wordTokens } from '../text/nlp.js';
import type { RankedPost, RetrievedPost } from './types.js';

export const MAX_CONTEXT_POSTS = 5;
export const SENTENCES_PER_POST = 2;
const ACCEPTED_BONUS = 0.25;
const VOTE_BONUS = 0.1;
/** A question restates the problem; its answers are what the user is after. */
const QUESTION_FACTOR = 0.6;
/** Retrieval returns its best match first (ts_rank in PostgreSQL); that order is evidence too. */
const POSITION_DECAY = 0.1;
const MAX_SENTENCE_CHARS = 400;

/** Stems that carry the query's meaning; falls back to every non-stop word for terse queries. */
export function queryStems(message: string): Set<string> {
  const stems = contentStems(message);
  if (stems.length > 0) return new Set(stems);
  return new Set(
    wordTokens(message)
      .filter((t) => !t.stopWord)
      .map((t) => t.stem),
  );
}

function overlap(text: string, query: ReadonlySet<string>): number {
  if (query.size === 0) return 0;
  const stems = new Set(wordTokens(text).map((t) => t.stem));
  let hits = 0;
  for (const stem of query) if (stems.has(stem)) hits++;
  return hits / query.size;
}

export function rankPosts(message: string, posts: readonly RetrievedPost[]): RankedPost[] {
  const query = queryStems(message);
  const ranked: RankedPost[] = [];
  for (const [position, post] of posts.entries()) {
    const excerpt = looksLikeHtml(post.excerpt) ? htmlToText(post.excerpt) : post.excerpt;
    const scored = splitSentences(excerpt)
      .map((sentence, order) => ({ sentence: sentence.trim(), order, relevance: overlap(sentence, query) }))
      .filter((s) => s.sentence.length > 0 && s.sentence.length <= MAX_SENTENCE_CHARS);
    const titleRelevance = overlap(post.title, query);
    const best = scored.reduce((max, s) => Math.max(max, s.relevance), 0);
    // Nothing in common with the question at all: quoting it would be making things up.
    if (best === 0 && titleRelevance === 0) continue;
    const picked = [...scored]
      .sort((a, b) => b.relevance - a.relevance || a.order - b.order)
      .slice(0, SENTENCES_PER_POST)
      .sort((a, b) => a.order - b.order)
      .map((s) => s.sentence);
    if (picked.length === 0) continue;
    // The title says what the whole thread is about; a matching sentence says this post covers it.
    const relevance = 0.5 * titleRelevance + 0.5 * best;
    const quality =
      1 + (post.isAccepted ? ACCEPTED_BONUS : 0) + VOTE_BONUS * Math.log1p(Math.max(0, post.votes));
    const kind = post.answerId === undefined ? QUESTION_FACTOR : 1;
    const prior = 1 / (1 + POSITION_DECAY * position);
    // Squared so that covering the whole question beats half of it, whatever the votes say.
    ranked.push({ post, score: relevance * relevance * quality * kind * prior, sentences: picked });
  }
  return ranked.sort((a, b) => b.score - a.score).slice(0, MAX_CONTEXT_POSTS);
}
