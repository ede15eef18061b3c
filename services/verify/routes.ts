import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { verificationResults } from '../../shared/metrics.js';
import { VERIFY_MAX_BATCH } from '../../shared/queues/verify.js';
import { createBulkVerifier } from '../../shared/verification/service.js';
import { requireScope } from '../http/auth.js';
import type { VerifyDeps } from './deps.js';
import { BulkVerifyBody, BulkVerifyResponse, ErrorResponse, VerifyBody, VerifyResponse } from './schemas.js';

/**
 * This process validates, enqueues and answers; only the verify workers probe (it opens no SMTP connection and
 * takes no part in MX host ownership). POST /verify is one `verify-domains` job; POST /bulk-verify fans the batch
 * out (whole domains per job). Both wait until VERIFY_BULK_DEADLINE_MS; entries with bad syntax are graded here,
 * without a job. Both need an X-API-Key with the `verify` scope; see docs/verification.md "Service".
 */
export const verifyRoutes: FastifyPluginAsyncTypebox<{ deps: VerifyDeps }> = async (app, { deps }) => {
  const log = deps.logger.child({ component: 'verify' });
  const bulk = createBulkVerifier({
    queues: deps.queues,
    deadlineMs: deps.config.verify.bulkDeadlineMs,
    logger: log,
  });

  // Checked before the body is read: a caller without a usable key learns that first (401/403), not a 400.
  const guard = requireScope('verify');
  const errors = { '4xx': ErrorResponse, '5xx': ErrorResponse };

  app.post(
    '/verify',
    {
      schema: {
        tags: ['verification'],
        summary: 'Verify one address',
        description:
          'Syntax, MX and SMTP checks of one address by a verify worker. A bad address is a result, not an error.',
        body: VerifyBody,
        response: { 200: VerifyResponse, ...errors },
      },
      onRequest: guard,
    },
    async (request) => {
      // A failed job or an unreachable queue is a 503 (transient for the caller).
      const data = await bulk.verifyOne(request.body.email, request.id, request.body.max_age);
      verificationResults.inc({ status: data.status, source: 'single' });
      return { success: true as const, data };
    },
  );

  app.post(
    '/bulk-verify',
    {
      schema: {
        tags: ['verification'],
        summary: `Verify up to ${VERIFY_MAX_BATCH} addresses`,
        description:
          'One result per submitted entry, in input order, duplicates included; an entry with bad syntax is an invalid ' +
          'result. Addresses are grouped by domain and probed by the workers; a group unfinished at the deadline is ' +
          'unknown with reason timeout.',
        body: BulkVerifyBody,
        response: { 200: BulkVerifyResponse, ...errors },
      },
      onRequest: guard,
      // Each address costs one point of the key's budget (counted once the body is valid).
      config: {
        rateLimitCost: (request: FastifyRequest) => (request.body as { emails: string[] }).emails.length,
      },
    },
    async (request) => {
      const data = await bulk.verifyBulk(request.body.emails, request.id, request.body.max_age);
      for (const result of data) verificationResults.inc({ status: result.status, source: 'bulk' });
      return { success: true as const, count: data.length, data };
    },
  );
};
