import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../ai/support/fake-openai-server.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { insertKveikPosts } from './support/kveik.js';

/**
 * An ai worker killed while its job waits on the provider, at the default lock settings: the other worker takes the
 * job over in time for the caller, who waits AI_DEADLINE_MS (20 s). With WORKER_LOCK_MS (30 s) the job came back
 * after the caller had been answered 503.
 */
describe('POST /api/ai.php when the ai worker running it is killed', () => {
  let fake: FakeOpenAiServer;
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const workers: RunningProcess[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
    runtime = await createTestRuntime({
      RATE_LIMIT_ENABLED: 'false',
      AI_PROVIDER_URL: fake.baseURL,
      AI_PROVIDER_KEY: 'sk-test-provider',
      AI_MODEL: 'fake-model',
      // Longer than the test: the held call must not fall back to the local reply before the kill.
      AI_TIMEOUT_MS: '120000',
    });
    await insertKveikPosts(runtime.database.db);
    await settingsRepository(runtime.database.db).set('ai_enabled', true);
    app = await buildQaApp(runtime);
    for (let k = 0; k < 2; k++)
      workers.push(
        startProcess('workers/main.ts', ['--queues', 'ai'], { ...runtime.env, CHILD_LOG_LEVEL: 'debug' }),
      );
    await Promise.all(workers.map((w) => w.waitFor(/workers started/, 60_000)));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await app?.close();
    await runtime?.close();
    await fake?.close();
  });

  it('answers from the worker that took the job over', async () => {
    fake.mode = 'hang';
    fake.reply = 'Ferment kveik warm, around 37 degrees [1].';
    const answer = app.inject({
      method: 'POST',
      url: '/api/ai.php',
      payload: { action: 'chat', content: 'What temperature should kveik yeast ferment at?' },
    });
    while (fake.requests.length === 0) await sleep(20);
    fake.mode = 'ok';
    // The worker that took the job says so in its log (which may reach us after the provider's request).
    const holder = await Promise.any(
      workers.map((w) => w.waitFor(/"job":"run"[^\n]*"msg":"job started"/, 20_000).then(() => w)),
    );
    holder.child.kill('SIGKILL');
    await holder.exited;

    const res = await answer;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, reply: fake.reply, generated_by: 'provider' });
    expect(fake.requests).toHaveLength(2);
  }, 60_000);
});
