import type { Config } from '../config.js';
import type { VerifierOptions } from './types.js';

/** The verifier options of issue 20 (typo suggestions, result cache) from the configuration. */
export function verdictOptionsFrom(
  v: Pick<Config['verify'], 'typoDomains' | 'typoSquatDomains' | 'resultTtlMs'>,
): Pick<VerifierOptions, 'typoDomains' | 'typoSquatDomains' | 'resultTtlMs'> {
  return {
    ...(v.typoDomains.length > 0 ? { typoDomains: v.typoDomains } : {}),
    typoSquatDomains: v.typoSquatDomains,
    resultTtlMs: v.resultTtlMs,
  };
}
