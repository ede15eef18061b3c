import { eq } from 'drizzle-orm';
import { buildQaApp } from '../../services/qa/app.js';
import { digestSends, questions, subscribers, users } from '../../shared/db/schema/index.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { startSmtpCatcher, type SmtpCatcher } from '../support/smtp-catcher.js';

export type QaApp = Awaited<ReturnType<typeof buildQaApp>>;

export interface NewsletterWorld {
  runtime: TestRuntime;
  app: QaApp;
  catcher: SmtpCatcher;
  /** Starts the newsletter workers in this process (the same pool a worker process runs). */
  startWorkers(): Promise<WorkerPool>;
  close(): Promise<void>;
}

/** A runtime whose mail goes to a loopback SMTP catcher; rate limits off (tests post many times). */
export async function startNewsletterWorld(env: Record<string, string> = {}): Promise<NewsletterWorld> {
  const catcher = await startSmtpCatcher();
  const runtime = await createTestRuntime({
    SMTP_URL: catcher.url,
    SMTP_TIMEOUT_MS: '5000',
    MAIL_FROM: 'Agora <digest@agora.test>',
    PUBLIC_URL: 'http://agora.test',
    RATE_LIMIT_ENABLED: 'false',
    NEWSLETTER_SEND_PER_SECOND: '1000',
    WORKER_LOCK_MS: '2000',
    ...env,
  });
  const app = await buildQaApp(runtime);
  const pools: WorkerPool[] = [];
  return {
    runtime,
    app,
    catcher,
    async startWorkers() {
      const pool = await startWorkerPool(runtime, ['newsletter']);
      pools.push(pool);
      return pool;
    },
    async close() {
      await Promise.all(pools.map((p) => p.close(2000)));
      await app.close();
      await runtime.close();
      await catcher.close();
    },
  };
}

/** Path and query of an absolute link from an email, for app.inject. */
export const pathOf = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

export async function subscriberByEmail(runtime: TestRuntime, email: string) {
  const [row] = await runtime.database.db.select().from(subscribers).where(eq(subscribers.email, email));
  return row;
}

export async function addConfirmed(
  runtime: TestRuntime,
  emails: string[],
  frequency: 'daily' | 'weekly' | 'monthly' = 'daily',
) {
  return runtime.database.db
    .insert(subscribers)
    .values(
      emails.map((email) => ({ email, frequency, status: 'confirmed' as const, confirmedAt: new Date() })),
    )
    .returning({ id: subscribers.id, email: subscribers.email });
}

let userSeq = 0;
/** Questions with given votes, asked at given times, by a fresh author. */
export async function addQuestions(
  runtime: TestRuntime,
  rows: { title: string; votes?: number; createdAt: Date }[],
) {
  const [author] = await runtime.database.db
    .insert(users)
    .values({ username: `author${++userSeq}-${Date.now()}`, displayName: 'Author' })
    .returning({ id: users.id });
  return runtime.database.db
    .insert(questions)
    .values(
      rows.map((r, i) => ({
        title: r.title,
        slug: `${r.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${userSeq}-${i}`,
        content: `Body of ${r.title}`,
        authorId: author!.id,
        votes: r.votes ?? 0,
        createdAt: r.createdAt,
      })),
    )
    .returning({ id: questions.id, title: questions.title, slug: questions.slug });
}

export async function sendsOf(runtime: TestRuntime, period: string) {
  return runtime.database.db.select().from(digestSends).where(eq(digestSends.period, period));
}

/** Polls `check` until it returns true (or a value), failing after the deadline; no timing is asserted. */
export async function until<T>(
  check: () => Promise<T | false | undefined | null>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
