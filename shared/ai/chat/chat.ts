/**
 * chat → { reply, sources }: retrieve from the site, rank, then compose — with the external
 * provider when one is configured and something relevant was found, otherwise (and whenever the
 * provider fails or times out) with the local extractive composer.
 *
 * A failing retrieval is not hidden: it throws, so the job fails and is retried like any other
 * transient database error, rather than telling the user the site knows nothing.
 */
import { clampText } from '../limits.js';
import { composeLocalReply, LOCAL_REPLY_POSTS, notFoundReply, toSources } from './compose-local.js';
import type { ChatProvider } from './provider.js';
import { rankPosts } from './rank.js';
import type { ChatResult, Retrieve, SourceUrl } from './types.js';

export interface ChatDeps {
  retrieve: Retrieve;
  provider?: ChatProvider | null;
  sourceUrl?: SourceUrl;
  onProviderError?: (error: unknown) => void;
}

export async function chat(message: string, deps: ChatDeps): Promise<ChatResult> {
  const text = clampText(message).trim();
  if (text === '')
    return { reply: 'Ask me something about the questions on this site.', sources: [], generatedBy: 'local' };

  const ranked = rankPosts(text, await deps.retrieve(text));
  if (ranked.length === 0) return { reply: notFoundReply(text), sources: [], generatedBy: 'local' };

  if (deps.provider) {
    try {
      const reply = await deps.provider.complete(text, ranked);
      return { reply, sources: toSources(ranked, deps.sourceUrl), generatedBy: 'provider' };
    } catch (error) {
      deps.onProviderError?.(error);
    }
  }
  const quoted = ranked.slice(0, LOCAL_REPLY_POSTS);
  return {
    reply: composeLocalReply(text, quoted),
    sources: toSources(quoted, deps.sourceUrl),
    generatedBy: 'local',
  };
}
