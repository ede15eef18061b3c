import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ServiceUnavailableError } from '../../shared/errors.js';
import { verificationResults } from '../../shared/metrics.js';
import { VERIFY_MAX_BATCH } from '../../shared/queues/verify.js';
import { createVerifier } from '../../shared/verification/index.js';
import { createBulkVerifier, verifierOptionsFrom } from '../../shared/verification/service.js';
import { requireScope } from '../http/auth.js';
import type { VerifyDeps } from './deps.js';
import { BulkVerifyBody, BulkVerifyResponse, ErrorResponse, VerifyBody, VerifyResponse } from './schemas.js';

/**
 * POST /verify answers inline from this process (one address: DNS + one SMTP session, no queue round trip).
 * POST /bulk-verify fans the batch out to the verify workers (whole domains per job) and waits for all of them until
 * VERIFY_BULK_DEADLINE_MS. Both need an X-API-Key with the `verify` scope; see docs/verification.md "Service".
 */
export const verifyRoutes: FastifyPluginAsyncTypebox<{ deps: VerifyDeps }> = async (app, { deps }) => {
  const log = deps.logger.child({ component: 'verify' });
  const verifier = createVerifier(verifierOptionsFrom(deps.config, deps.redis, log));
  const bulk = createBulkVerifier({
    queues: deps.queues,
    verifier,
    deadlineMs: deps.config.verify.bulkDeadlineMs,
    logger: log,
  });
  app.addHook('onClose', async () => verifier.close());

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
          'Syntax, MX and SMTP checks of one address, answered inline. A bad address is a result, not an error.',
        body: VerifyBody,
        response: { 200: VerifyResponse, ...errors },
      },
      onRequest: guard,
    },
    async (request) => {
      try {
        const data = await verifier.verify(request.body.email);
        verificationResults.inc({ status: data.status, source: 'single' });
        return { success: true as const, data };
      } catch (err) {
        // The engine throws only when Redis (cache, MX semaphore) fails: transient for the caller.
        request.log.error({ err }, 'verification failed');
        throw new ServiceUnavailableError('Verification is temporarily unavailable; try again later');
      }
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
      const data = await bulk.verifyBulk(request.body.emails, request.id);
      for (const result of data) verificationResults.inc({ status: result.status, source: 'bulk' });
      return { success: true as const, count: data.length, data };
    },
  );
};
