/** Public surface of the AI engine; everything else under shared/ai is an implementation detail. */
export * from './limits.js';
export { analyzeSpam, spamCheck, type SpamAnalysis, type SpamVerdict } from './spam/spam-check.js';
export { loadSpamModel, readSpamModelFile, SPAM_MODEL_PATH } from './spam/model-file.js';
export type { NaiveBayesModel, SpamModelFile } from './spam/naive-bayes.js';
