import { Type } from '@fastify/type-provider-typebox';
import { nameComponents } from '../http/components.js';
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
});

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

// Named components of the OpenAPI document (services/http/components.ts).
nameComponents({ Error: ErrorResponse, VerificationResult });
