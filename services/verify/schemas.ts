import { Type } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../shared/errors.js';
import { VERIFY_MAX_BATCH, VerificationResultSchema } from '../../shared/queues/verify.js';

/** Request and response schemas of the verification service; they also document the API (OpenAPI). */

export const ErrorResponse = Type.Object(
  { error: Type.Literal(true), message: Type.String(), code: Type.Integer() },
  { description: 'Every error: the message is for humans, code equals the HTTP status' },
);

/** One address's result; declared with the verify job, whose answer it is. */
export const VerificationResult = VerificationResultSchema;

export const VerifyBody = Type.Object({ email: Type.String() });
export const BulkVerifyBody = Type.Object({
  emails: Type.Array(Type.String(), { maxItems: VERIFY_MAX_BATCH }),
});

export const VerifyResponse = Type.Object({ success: Type.Literal(true), data: VerificationResult });
export const BulkVerifyResponse = Type.Object({
  success: Type.Literal(true),
  count: Type.Integer({ description: 'Number of results, equal to the number of submitted entries' }),
  data: Type.Array(VerificationResult, {
    description: 'One result per submitted entry, in input order, duplicates included',
  }),
});

/*
 * Our own body checks instead of Ajv's: the HTTP layer's Ajv coerces types (123 would pass as "123", a lone string as
 * a one-entry array), and the API promises a 400 for a non-string email or a non-array emails. The messages name
 * the field so a caller can fix the request. The schemas above still document the bodies.
 */

type Checked<T> = { value: T } | { error: ValidationError };

const isObject = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body);

export function checkVerifyBody(body: unknown): Checked<{ email: string }> {
  if (!isObject(body))
    return { error: new ValidationError('The body must be a JSON object: {"email": "..."}') };
  if (!('email' in body)) return { error: new ValidationError('email is required') };
  if (typeof body.email !== 'string') return { error: new ValidationError('email must be a string') };
  return { value: { email: body.email } };
}

export function checkBulkVerifyBody(body: unknown): Checked<{ emails: string[] }> {
  if (!isObject(body))
    return { error: new ValidationError('The body must be a JSON object: {"emails": ["..."]}') };
  if (!('emails' in body)) return { error: new ValidationError('emails is required') };
  const emails = body.emails;
  if (!Array.isArray(emails)) return { error: new ValidationError('emails must be an array of strings') };
  if (emails.length > VERIFY_MAX_BATCH) {
    return {
      error: new ValidationError(
        `emails holds ${emails.length} entries; at most ${VERIFY_MAX_BATCH} are allowed per request`,
      ),
    };
  }
  const bad = emails.findIndex((e) => typeof e !== 'string');
  if (bad >= 0) return { error: new ValidationError(`emails[${bad}] must be a string`) };
  return { value: { emails: emails as string[] } };
}
