/**
 * The local, extractive composer: it quotes the best sentences of the best-ranked posts, each
 * followed by its citation number, and never writes a claim of its own. With nothing relevant it
 * says so plainly instead of guessing.
 */
import type { ChatSource, RankedPost, SourceUrl } from './types.js';

/** Quoting more than three posts turns a reply into a search result page. */
export const LOCAL_REPLY_POSTS = 3;

export function notFoundReply(message: string): string {
  const topic = message.trim().replace(/\s+/g, ' ');
  const shown = topic.length > 80 ? `${topic.slice(0, 77)}…` : topic;
  return `I could not find anything on this site about “${shown}”. You could ask it as a new question.`;
}

export function toSources(ranked: readonly RankedPost[], sourceUrl?: SourceUrl): ChatSource[] {
  const top = ranked[0]?.score ?? 0;
  return ranked.map(({ post, score }) => {
    const url = sourceUrl?.(post.questionId, post.answerId);
    return {
      type: post.answerId === undefined ? 'question' : 'answer',
      id: post.answerId ?? post.questionId,
      questionId: post.questionId,
      title: post.title,
      ...(url ? { url } : {}),
      score: top > 0 ? Math.round((score / top) * 1000) / 1000 : 0,
    };
  });
}

export function composeLocalReply(message: string, ranked: readonly RankedPost[]): string {
  if (ranked.length === 0) return notFoundReply(message);
  const lines = ranked.slice(0, LOCAL_REPLY_POSTS).map(({ post, sentences }, i) => {
    const intro =
      post.answerId === undefined
        ? `The question “${post.title}” says`
        : post.isAccepted
          ? `The accepted answer to “${post.title}” says`
          : `An answer to “${post.title}” says`;
    return `- ${intro}: ${sentences.join(' ')} [${i + 1}]`;
  });
  return `Here is what I found on this site:\n\n${lines.join('\n')}`;
}
