import { Type } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../shared/errors.js';
import { VERIFY_MAX_BATCH } from '../../shared/queues/verify.js';

/** Request and response schemas of the verification service; they also document the API (OpenAPI). */

export const ErrorResponse = Type.Object(
  { error: Type.Literal(true), message: Type.String(), code: Type.Integer() },
  { description: 'Every error: the message is for humans, code equals the HTTP status' },
);

const Status = Type.Union([
  Type.Literal('valid'),
  Type.Literal('invalid'),
  Type.Literal('risky'),
  Type.Literal('unknown'),
]);

export const VerificationResult = Type.Object({
  email: Type.String({ description: 'The address checked (trimmed, NFC-normalised)' }),
  status: Status,
  syntax_valid: Type.Boolean(),
  mx_found: Type.Boolean({ description: 'A mail host exists: MX records or the implicit MX (A/AAAA)' }),
  smtp_valid: Type.Boolean({ description: 'An MX accepted RCPT TO for this address' }),
  is_disposable: Type.Boolean(),
  is_role_based: Type.Boolean(),
  is_free_provider: Type.Boolean(),
  is_catch_all: Type.Boolean(),
  domain: Type.String({ description: 'Domain part, lower case, Unicode form' }),
  mx_record: Type.String({ description: "Host name of the mail exchanger used; '' without a mail host" }),
  score: Type.Integer({
    minimum: 0,
    maximum: 100,
    description: 'invalid 0–10, unknown 20–39, risky 40–79, valid 80–100',
  }),
  reason: Type.String({ description: 'The deciding factor (docs/verification.md, "Reasons")' }),
  smtp_code: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Basic code of the deciding SMTP reply',
  }),
  smtp_message: Type.Union([Type.String(), Type.Null()], {
    description: 'Enhanced code and text of that reply',
  }),
  duration_ms: Type.Integer({ minimum: 0 }),
  mx_records: Type.Array(Type.String(), {
    description:
      'Every mail host of the domain by preference (the domain itself for an implicit MX); [] without one',
  }),
  did_you_mean: Type.Union([Type.String(), Type.Null()], {
    description:
      'A corrected address when the domain receives no mail and a likely intended one (a popular or free provider, or a TLD slip) does; null otherwise',
  }),
  verified_at: Type.String({ format: 'date-time', description: 'When the verdict was reached (UTC)' }),
  cached: Type.Boolean({
    description:
      'The verdict was reused from the result cache (VERIFY_RESULT_TTL_MS; the request may bound its age with max_age)',
  }),
  normalized_email: Type.Union([Type.String(), Type.Null()], {
    description:
      'The address as it should be stored: local part as typed (NFC), domain lower case in Unicode (UTS #46); null for bad syntax',
  }),
});

/** `max_age` of /verify, /bulk-verify and POST /lists: the oldest cached verdict the caller accepts. */
export const MaxAge = Type.Integer({
  minimum: 0,
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

/*
 * Our own body checks instead of Ajv's: the HTTP layer's Ajv coerces types (123 would pass as "123", a lone string as
 * a one-entry array), and the API promises a 400 for a non-string email or a non-array emails. The messages name
 * the field so a caller can fix the request. The schemas above still document the bodies.
 */

type Checked<T> = { value: T } | { error: ValidationError };

const isObject = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body);

export function checkVerifyBody(body: unknown): Checked<{ email: string; maxAge?: number }> {
  if (!isObject(body))
    return { error: new ValidationError('The body must be a JSON object: {"email": "..."}') };
  if (!('email' in body)) return { error: new ValidationError('email is required') };
  if (typeof body.email !== 'string') return { error: new ValidationError('email must be a string') };
  const maxAge = checkMaxAge(body);
  if ('error' in maxAge) return maxAge;
  return { value: { email: body.email, ...maxAge.value } };
}

/** The optional `max_age` of a verification body: a whole number of seconds, 0 or more. */
export function checkMaxAge(body: Record<string, unknown>): Checked<{ maxAge?: number }> {
  if (!('max_age' in body) || body.max_age === undefined) return { value: {} };
  const v = body.max_age;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    return { error: new ValidationError('max_age must be a whole number of seconds, 0 or more') };
  return { value: { maxAge: v } };
}

export function checkBulkVerifyBody(body: unknown): Checked<{ emails: string[]; maxAge?: number }> {
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
  const maxAge = checkMaxAge(body);
  if ('error' in maxAge) return maxAge;
  return { value: { emails: emails as string[], ...maxAge.value } };
}
