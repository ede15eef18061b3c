import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** No worker serves the ai queue: the endpoint must give up at AI_DEADLINE_MS with a 503, and the job must not be computed later. */
describe('POST /api/ai.php past the deadline', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let pool: WorkerPool | undefined;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', AI_DEADLINE_MS: '200' });
    await settingsRepository(runtime.database.db).set('ai_enabled', true);
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await pool?.close(5000);
    await app?.close();
    await runtime?.close();
  });

  it('answers 503 with the error body when no worker answers in time', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/ai.php',
      payload: { action: 'spam_check', content: 'Anyone there?' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: true, code: 503, message: expect.stringMatching(/200 ms/) });
    // A 503 says when to try again, as every 503 of the services does.
    expect(res.headers['retry-after']).toBe('2');
  });

  it('a worker that starts later skips the expired job instead of computing an answer nobody waits for', async () => {
    pool = await startWorkerPool(runtime, ['ai']);
    const queue = runtime.queues.queue('ai');
    await vi.waitFor(
      async () => {
        const done = (await queue.getJobs(['completed'])).filter((j) => j.name === 'run');
        expect(done).toHaveLength(1);
        expect(done[0]!.returnvalue).toEqual({ skipped: 'expired' });
      },
      { timeout: 20_000, interval: 100 },
    );
  });
});
