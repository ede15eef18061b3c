import { Type } from 'typebox';
import type { VerificationReason } from '../verification/index.js';
import { defineQueue, retrying, Skipped } from './define.js';

/** Most addresses one bulk request (and so one job) carries. */
export const VERIFY_MAX_BATCH = 100;

const Status = Type.Union([
  Type.Literal('valid'),
  Type.Literal('invalid'),
  Type.Literal('risky'),
  Type.Literal('unknown'),
]);

/** One address's result: a verify job's answer and the verify service's response (which documents it). */
export const VerificationResultSchema = Type.Object({
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
  // A string in the schema (the list of reasons is documented, not enforced on the wire), typed as the union.
  reason: Type.Unsafe<VerificationReason>(
    Type.String({ description: 'The deciding factor (docs/verification.md, "Reasons")' }),
  ),
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

/**
 * One job probes the addresses of one or more whole domains (a domain's addresses share the DNS answer, the
 * catch-all probe and the SMTP sessions; small domains are packed together). POST /bulk-verify enqueues a request's
 * jobs in one round trip and waits for them all (enqueueAllAndWait).
 */
export const verifyQueue = defineQueue({
  name: 'verify',
  jobs: {
    'verify-domains': {
      emails: Type.Array(Type.String({ maxLength: 512 }), { minItems: 1, maxItems: VERIFY_MAX_BATCH }),
      // Epoch ms after which nobody waits for the answer any more: a worker skips the job instead of probing.
      expiresAt: Type.Optional(Type.Integer({ minimum: 0 })),
      // The request's max_age: the oldest cached verdict it accepts (0: a fresh probe).
      maxAgeSec: Type.Optional(Type.Integer({ minimum: 0 })),
    },
  },
  // One result per address of the job, in order; or skipped (expired before a worker took it).
  results: {
    'verify-domains': Type.Union([
      Type.Array(VerificationResultSchema, { maxItems: VERIFY_MAX_BATCH }),
      Skipped,
    ]),
  },
  // Payloads and results are email addresses: keep them only as long as a waiting request or a retry needs them.
  defaultJobOptions: {
    ...retrying(2, 1000),
    removeOnComplete: { age: 600, count: 5000 },
    removeOnFail: { age: 24 * 3600, count: 1000 },
  },
});
