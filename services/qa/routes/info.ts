import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { answerListsRepository } from '../../../shared/db/repositories/answer-lists.js';
import { questionsRepository } from '../../../shared/db/repositories/questions.js';
import { siteInfoRepository } from '../../../shared/db/repositories/site-info.js';
import type { QaDeps } from '../deps.js';
import { ErrorResponse, SiteInfo, success } from '../schemas.js';

/** GET /info: the site's totals and recent activity, all read from maintained counters. */
export const infoRoutes: FastifyPluginAsyncTypebox<{ deps: QaDeps }> = async (app, { deps }) => {
  const info = siteInfoRepository(deps.database.db);
  const questions = questionsRepository(deps.database.db);
  const answers = answerListsRepository(deps.database.db);

  app.get(
    '/info',
    {
      config: { readCache: true },
      schema: {
        tags: ['info'],
        summary: 'Site totals, daily activity, the newest question and answer',
        response: { 200: success(SiteInfo), '4xx': ErrorResponse },
      },
    },
    async () => {
      const [totals, activity, newest] = await Promise.all([info.totals(), info.activity(), info.newest()]);
      const question = newest.question ? await questions.find(String(newest.question)) : undefined;
      const [answer] = newest.answer ? await answers.byIds([newest.answer]) : [];
      return {
        success: true as const,
        data: { totals, activity, newest_question: question ?? null, newest_answer: answer ?? null },
      };
    },
  );
};
