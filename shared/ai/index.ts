/**
 * Public surface of the AI engine (what services/ and workers/ may import); everything else under
 * shared/ai is an implementation detail. See docs/ai.md.
 */
export * from './limits.js';
export { createAiEngine, type AiEngine, type AiEngineDeps, type AiLogger } from './engine.js';

export { analyzeSpam, spamCheck, type SpamAnalysis, type SpamVerdict } from './spam/spam-check.js';
export { loadSpamModel, readSpamModelFile, SPAM_MODEL_PATH } from './spam/model-file.js';
export type { NaiveBayesModel, SpamModelFile } from './spam/naive-bayes.js';

export {
  analyzeQuality,
  qualityCheck,
  splitTitle,
  type FindSimilarQuestions,
  type QualityAnalysis,
  type QualityResult,
  type SimilarQuestion,
} from './quality/quality-check.js';
export { QUALITY_RULES, QUALITY_THRESHOLDS, type QualityIssue } from './quality/rules.js';

export {
  buildTagIndex,
  loadTagIndex,
  serializeTagIndex,
  TagIndex,
  type TagIndexFile,
} from './tags/tag-index.js';
export { slugifyTag, type TagRecord, type TagRef } from './tags/tag-record.js';
export { suggestTags, type SuggestedTag } from './tags/suggest-tags.js';
export { readStackExchangeQuestions } from './tags/stackexchange-posts.js';

export { chat } from './chat/chat.js';
export { createChatProvider, type ChatProvider, type ChatProviderConfig } from './chat/provider.js';
export type { ChatResult, ChatSource, Retrieve, RetrievedPost, SourceUrl } from './chat/types.js';
