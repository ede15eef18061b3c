/**
 * The baseline for bench/qa-read.ts: a bare Fastify (no plugins, no schemas, no rate limits, no ETags, no view
 * counting) whose handlers call the same read repositories as the Q&A service and send the result as JSON (the
 * rows PostgreSQL renders as JSON pass through, as in the service).
 * What the service costs on top of this is the price of its plugins and validation.
 *
 *   DATABASE_URL=… PORT=… tsx bench/lib/qa-read-baseline.ts
 */
import Fastify from 'fastify';
import { openDatabase } from '../../shared/db/client.js';
import { questionsRepository, type QuestionListParams } from '../../shared/db/repositories/questions.js';
import { searchService } from '../../shared/qa/search.js';
import { sendData } from '../../services/http/json-response.js';

const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '.data' });
const questions = questionsRepository(database.db);
const search = searchService(database.db);

type Query = Record<string, string | undefined>;
const int = (v: string | undefined, fallback: number) => (v ? Number(v) : fallback);

const app = Fastify({ logger: false });
app.get('/health', async () => ({ ok: true }));
app.get('/api/questions', async (request, reply) => {
  const q = request.query as Query;
  const params: QuestionListParams = {
    page: int(q.page, 1),
    limit: int(q.limit, 20),
    sort: (q.sort ?? 'newest') as QuestionListParams['sort'],
    ...(q.tag ? { tag: q.tag } : {}),
  };
  return sendData(reply, await questions.list(params));
});
app.get('/api/questions/:id', async (request, reply) => {
  const include = new Set((request.query as Query).include?.split(',') ?? []);
  const question = await questions.detail((request.params as { id: string }).id, {
    answers: include.has('answers'),
    comments: include.has('comments'),
  });
  if (!question) return reply.code(404).send({ error: true, message: 'Question not found', code: 404 });
  return sendData(reply, question.json);
});
app.get('/api/search', async (request) => {
  const q = request.query as Query;
  return {
    success: true,
    data: await search.search({ q: q.q ?? '', type: 'all', page: int(q.page, 1), limit: int(q.limit, 20) }),
  };
});

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3100) });
const stop = async () => {
  await app.close();
  await database.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
