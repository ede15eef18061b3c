import type { FastifyPluginAsync } from 'fastify';
import { requireScope } from '../../../http/auth.js';
import { qaWrites } from '../../../../shared/qa/writes.js';
import type { QaDeps } from '../../deps.js';
import { answerWriteRoutes } from './answers.js';
import { commentWriteRoutes } from './comments.js';
import { questionWriteRoutes } from './questions.js';
import { voteWriteRoutes } from './votes.js';

/**
 * Every write needs `Authorization: Bearer <key>` with the qa:write scope; the key's user is the actor. The scope
 * is checked before the body is validated, so a caller without the right key learns that first (401/403).
 */
export const writeRoutes: FastifyPluginAsync<{ deps: QaDeps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireScope('qa:write'));
  const writes = qaWrites(deps.database.db, deps.config);
  await app.register(questionWriteRoutes, { deps, writes });
  await app.register(answerWriteRoutes, { deps, writes });
  await app.register(commentWriteRoutes, { deps, writes });
  await app.register(voteWriteRoutes, { deps, writes });
};
