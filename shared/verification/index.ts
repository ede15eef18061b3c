// Public surface of the verification engine; everything else is internal to this folder.
export {
  badSyntaxResult,
  createVerifier,
  groupByDomain,
  isUnanswered,
  unfinishedResult,
  type DomainGroup,
  type Verifier,
  type VerifyRequestOptions,
} from './verifier.js';
export { parseAddress, type ParsedAddress, type SyntaxFailure, type SyntaxErrorCode } from './syntax.js';
export { isForbiddenAddress } from './host-guard.js';
export { SCORE_BANDS } from './verdict.js';
export { PROVIDER_RULES, type ProviderRule } from './providers.js';
export type {
  VerificationReason,
  VerificationResult,
  VerificationStatus,
  VerifierLogger,
  VerifierOptions,
} from './types.js';
