/**
 * Digest throughput: N confirmed subscribers and 10 questions in PostgreSQL → one build-digest job → N emails
 * received by a loopback SMTP server. Reports the time from enqueue to the last message accepted and to the
 * last send recorded, i.e. the whole path: fan-out, claim row, SMTP (pooled), 'sent' update.
 *
 * One in-process newsletter worker (concurrency 8, pool of 8 SMTP connections) against a dedicated database
 * (agora_bench_newsletter, recreated) and QUEUE_PREFIX; the pace limit is raised out of the way unless given.
 *
 *   npx tsx bench/newsletter-digest.ts [--subscribers 2000] [--per-second 10000]
 *
 * Needs PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres) and Redis
 * (BENCH_REDIS_URL, default redis://127.0.0.1:6379). Loopback only; bounded (≤ 20000 subscribers, 180 s).
 */
import { sql } from 'drizzle-orm';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { openRuntime } from '../shared/runtime.js';
import { startWorkerPool } from '../workers/pool.js';
import { startSmtpCatcher } from '../test/support/smtp-catcher.js';
import { parseBenchArgs } from './lib/args.js';
import { dropDatabase, resetBenchState } from './lib/postgres.js';
import { deleteKeys, REDIS_URL } from './lib/redis.js';

const { subscribers: N, 'per-second': PER_SECOND } = parseBenchArgs({
  subscribers: [2000, 1, 20_000],
  'per-second': [10_000, 1, 10_000],
});
const DEADLINE_MS = 180_000;
const DATABASE = 'agora_bench_newsletter';
const PREFIX = '{agora-bench-newsletter}';

const databaseUrl = await resetBenchState(DATABASE, PREFIX);

const catcher = await startSmtpCatcher();
const config = loadConfig({
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  QUEUE_PREFIX: PREFIX,
  SMTP_URL: catcher.url,
  PUBLIC_URL: 'http://agora.bench',
  NEWSLETTER_SEND_PER_SECOND: String(PER_SECOND),
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
});
const runtime = await openRuntime(
  config,
  createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn', 'bench'),
  REDIS_URL,
);
const period = 'daily-2024-06-03';
await runtime.database.query(sql`INSERT INTO users (username, display_name) VALUES ('bench', 'Bench')`);
await runtime.database.query(sql`
  INSERT INTO questions (title, slug, content, author_id, votes, created_at)
  SELECT 'Bench question ' || g, 'bench-question-' || g, 'Body', (SELECT id FROM users LIMIT 1), g, '2024-06-03T10:00:00Z'
  FROM generate_series(1, 10) g`);
await runtime.database.query(sql`
  INSERT INTO newsletter_subscribers (email, frequency, status, confirmed_at)
  SELECT 'reader' || g || '@example.test', 'daily', 'confirmed', now() FROM generate_series(1, ${N}) g`);

const pool = await startWorkerPool(runtime, ['newsletter']);
const started = performance.now();
await runtime.queues.enqueue('newsletter', 'build-digest', { frequency: 'daily', period });
await catcher.waitFor(N, { timeoutMs: DEADLINE_MS });
const received = performance.now() - started;
for (;;) {
  const [row] = await runtime.database.query<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM digest_sends WHERE status = 'sent' AND period = ${period}`,
  );
  if (row!.n >= N) break;
  if (performance.now() - started > DEADLINE_MS) throw new Error('sends not recorded in time');
  await new Promise((r) => setTimeout(r, 20));
}
const recorded = performance.now() - started;
const mem = process.memoryUsage();

console.log(
  JSON.stringify(
    {
      subscribers: N,
      perSecondLimit: PER_SECOND,
      lastMessageAcceptedMs: Math.round(received),
      lastSendRecordedMs: Math.round(recorded),
      messagesPerSecond: Math.round((N / recorded) * 1000),
      duplicates: N - new Set(catcher.messages.flatMap((m) => m.to)).size,
      rssMiB: Math.round(mem.rss / 2 ** 20),
    },
    null,
    2,
  ),
);

await pool.close(5000);
await runtime.close();
await catcher.close();
await deleteKeys(PREFIX);
await dropDatabase(DATABASE);
