import createClient, { type ClientOptions } from 'openapi-fetch';
import type { components as QaComponents, paths as QaPaths } from './qa.js';
import type { components as VerifyComponents, paths as VerifyPaths } from './verify.js';

export type { QaPaths, VerifyPaths };
export type QaSchemas = QaComponents['schemas'];
export type VerifySchemas = VerifyComponents['schemas'];
export type Question = QaSchemas['Question'];
export type Answer = QaSchemas['Answer'];
export type User = QaSchemas['User'];
export type Tag = QaSchemas['Tag'];
export type Category = QaSchemas['Category'];
export type Pagination = QaSchemas['Pagination'];
export type ApiError = QaSchemas['Error'];
export type VerificationResult = VerifySchemas['VerificationResult'];

/**
 * A typed client of the Q&A API (openapi-fetch): paths, parameters, bodies and answers are checked against the
 * service's OpenAPI document. Reads need no key; writes need one with the qa:write scope.
 *
 *   const qa = createQaClient({ baseUrl: 'http://localhost:3000', apiKey });
 *   const { data, error } = await qa.GET('/api/questions', { params: { query: { sort: 'votes' } } });
 */
export function createQaClient(options: ClientOptions & { apiKey?: string } = {}) {
  const { apiKey, headers, ...rest } = options;
  return createClient<QaPaths>({
    ...rest,
    headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...(headers as object) },
  });
}

/** A typed client of the verification API; every call needs a key with the verify scope (X-API-Key). */
export function createVerifyClient(options: ClientOptions & { apiKey: string }) {
  const { apiKey, headers, ...rest } = options;
  return createClient<VerifyPaths>({ ...rest, headers: { 'x-api-key': apiKey, ...(headers as object) } });
}
