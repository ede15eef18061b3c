import { Type } from '@fastify/type-provider-typebox';
import { nameComponents } from '../http/components.js';
import { ErrorResponse } from '../http/errors.js';
import { VERIFY_MAX_BATCH, VerificationResultSchema } from '../../shared/queues/verify.js';

/** Request and response schemas of the verification service; they also document the API (OpenAPI). */

// Declared once for both services; re-exported for the routes that import their schemas from here.
export { ErrorResponse };

/** One address's result; declared with the verify job, whose answer it is. */
export const VerificationResult = VerificationResultSchema;

/** `max_age` of /verify, /bulk-verify and POST /lists: the oldest cached verdict the caller accepts. */
export const MaxAge = Type.Integer({
  minimum: 0,
  maximum: 31_536_000,
  description:
    'Seconds: accept a cached verdict up to this old (default: any still cached, VERIFY_RESULT_TTL_MS); 0 forces a fresh probe',
});
export const VerifyBody = Type.Object({ email: Type.String(), max_age: Type.Optional(MaxAge) });
export const BulkVerifyBody = Type.Object({
  emails: Type.Array(Type.String(), { maxItems: VERIFY_MAX_BATCH }),
  max_age: Type.Optional(MaxAge),
});

export const VerifyResponse = Type.Object({ success: Type.Literal(true), data: VerificationResult });
export const BulkVerifyResponse = Type.Object({
  success: Type.Literal(true),
  count: Type.Integer({ description: 'Number of results, equal to the number of submitted entries' }),
  data: Type.Array(VerificationResult, {
    description: 'One result per submitted entry, in input order, duplicates included',
  }),
});

// Named components of the OpenAPI document (services/http/components.ts).
nameComponents({ Error: ErrorResponse, VerificationResult });
