/**
 * The AI engine: one per process, created by the composition root of the worker (or of the
 * all-in-one process) and shared by every AI job. Models load here, once; everything that touches
 * PostgreSQL is injected, so the engine has no database, Redis or environment access of its own.
 */
import { AI_DEFAULT_TAG_LIMIT } from './limits.js';
import { chat } from './chat/chat.js';
import { createChatProvider, type ChatProviderConfig } from './chat/provider.js';
import type { ChatResult, Retrieve, SourceUrl } from './chat/types.js';
import { qualityCheck, type FindSimilarQuestions, type QualityResult } from './quality/quality-check.js';
import { loadSpamModel } from './spam/model-file.js';
import type { NaiveBayesModel } from './spam/naive-bayes.js';
import { spamCheck, type SpamVerdict } from './spam/spam-check.js';
import { suggestTags, type SuggestedTag } from './tags/suggest-tags.js';
import type { TagIndex } from './tags/tag-index.js';

/** pino-compatible: pass the worker's logger (or a child of it). */
export interface AiLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

export interface AiEngineDeps {
  /** Defaults to the committed model (shared/ai/models/spam-model.json), loaded once. */
  spamModel?: NaiveBayesModel;
  /** Built by buildTagIndex or loaded by loadTagIndex; without one, suggestTags returns []. */
  tagIndex?: TagIndex | null;
  findSimilarQuestions: FindSimilarQuestions;
  retrieve: Retrieve;
  /** Optional OpenAI-compatible provider for chat replies; the local composer is the fallback. */
  provider?: ChatProviderConfig | null;
  /** Builds `url` for chat sources. */
  sourceUrl?: SourceUrl;
  logger?: AiLogger;
}

export interface AiEngine {
  spamCheck(content: string): SpamVerdict;
  qualityCheck(content: string, title?: string | null): Promise<QualityResult>;
  suggestTags(content: string, limit?: number): { tags: SuggestedTag[] };
  chat(message: string): Promise<ChatResult>;
  /** Swaps in a freshly rebuilt tag index (the periodic rebuild job) without a restart. */
  setTagIndex(index: TagIndex | null): void;
  readonly hasTagIndex: boolean;
  readonly hasProvider: boolean;
}

export function createAiEngine(deps: AiEngineDeps): AiEngine {
  const spamModel = deps.spamModel ?? loadSpamModel();
  const provider = deps.provider ? createChatProvider(deps.provider) : null;
  let tagIndex = deps.tagIndex ?? null;
  const warn = (message: string) => (err: unknown) => deps.logger?.warn({ err }, message);

  return {
    spamCheck: (content) => spamCheck(spamModel, content),
    qualityCheck: (content, title) =>
      qualityCheck(content, title, {
        findSimilarQuestions: deps.findSimilarQuestions,
        onLookupError: warn('ai: similar-question lookup failed; duplicate rule skipped'),
      }),
    suggestTags: (content, limit = AI_DEFAULT_TAG_LIMIT) => ({ tags: suggestTags(tagIndex, content, limit) }),
    chat: (message) =>
      chat(message, {
        retrieve: deps.retrieve,
        provider,
        ...(deps.sourceUrl ? { sourceUrl: deps.sourceUrl } : {}),
        onProviderError: warn('ai: chat provider failed; answered with the local composer'),
      }),
    setTagIndex(index) {
      tagIndex = index;
    },
    get hasTagIndex() {
      return tagIndex !== null && tagIndex.size > 0;
    },
    get hasProvider() {
      return provider !== null;
    },
  };
}
