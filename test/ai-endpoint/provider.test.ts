import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../ai/support/fake-openai-server.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { insertKveikPosts, type KveikPosts } from './support/kveik.js';

/**
 * The whole path with an external provider: the Q&A app enqueues, a worker *process* (workers/main.ts --queues ai)
 * retrieves from PostgreSQL and calls an OpenAI-compatible server on 127.0.0.1, then falls back to the local reply when
 * that server fails or hangs past AI_TIMEOUT_MS.
 */
describe('POST /api/ai.php chat with AI_PROVIDER_URL', () => {
  let fake: FakeOpenAiServer;
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let worker: RunningProcess;
  let kveik: KveikPosts;

  const chat = async (content: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/ai.php',
      payload: { action: 'chat', content },
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
    runtime = await createTestRuntime({
      RATE_LIMIT_ENABLED: 'false',
      AI_PROVIDER_URL: fake.baseURL,
      AI_PROVIDER_KEY: 'sk-test-provider',
      AI_MODEL: 'fake-model',
      // Room for the provider's answer on a loaded machine; the hang case still ends well within AI_DEADLINE_MS (20 s).
      AI_TIMEOUT_MS: '5000',
    });
    kveik = await insertKveikPosts(runtime.database.db);
    await settingsRepository(runtime.database.db).set('ai_enabled', true);
    app = await buildQaApp(runtime);
    worker = startProcess('workers/main.ts', ['--queues', 'ai'], { ...runtime.env, LOG_LEVEL: 'info' });
    await worker.waitFor(/workers started/, 60_000);
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await runtime?.close();
    await fake?.close();
  });

  it("sends the site's posts to the provider and returns its reply with those posts as sources", async () => {
    fake.mode = 'ok';
    fake.reply = 'Ferment kveik warm, around 37 degrees [1].';
    const body = await chat('What temperature should kveik yeast ferment at?');
    expect(body).toMatchObject({ success: true, reply: fake.reply, generated_by: 'provider' });
    expect(body.sources.map((s: { id: number }) => s.id)).toContain(kveik.acceptedAnswer);

    const sent = fake.requests.at(-1)!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test-provider');
    expect(sent.body.model).toBe('fake-model');
    const prompt = sent.body.messages!.map((m) => m.content).join('\n');
    expect(prompt).toContain('between 30 and 40 degrees Celsius');
    expect(prompt).toContain('What temperature should kveik yeast ferment at?');
  });

  it('falls back to the local reply when the provider fails', async () => {
    fake.mode = 'error';
    const body = await chat('What temperature should kveik yeast ferment at?');
    expect(body).toMatchObject({ success: true, generated_by: 'local' });
    expect(body.reply).toContain('[1]');
    expect(body.sources.map((s: { id: number }) => s.id)).toContain(kveik.acceptedAnswer);
  });

  it('falls back to the local reply when the provider does not answer within AI_TIMEOUT_MS', async () => {
    fake.mode = 'hang';
    const before = fake.requests.length;
    const body = await chat('Can kveik yeast be dried and kept?');
    expect(fake.requests.length).toBe(before + 1);
    expect(body).toMatchObject({ success: true, generated_by: 'local' });
    expect(body.sources.map((s: { id: number }) => s.id)).toContain(kveik.dryingAnswer);
  });

  it('does not call the provider when the site has nothing on the subject', async () => {
    fake.mode = 'ok';
    const before = fake.requests.length;
    const body = await chat('lattice quantum chromodynamics and gluons');
    expect(body).toMatchObject({ success: true, sources: [], generated_by: 'local' });
    expect(fake.requests.length).toBe(before);
  });

  it('serves every action from the worker process, which loaded its engine once', async () => {
    await runtime.queues.enqueueAndWait('ai', 'rebuild-tag-index', {}, 30_000);
    const inject = (payload: object) => app.inject({ method: 'POST', url: '/api/ai.php', payload });
    const tags = await inject({
      action: 'suggest_tags',
      content: 'My kveik yeast culture: how warm should fermentation be?',
    });
    expect(tags.statusCode).toBe(200);
    expect(tags.json().tags.map((t: { slug: string }) => t.slug)).toContain('kveik');
    expect((await inject({ action: 'spam_check', content: 'Kveik question' })).statusCode).toBe(200);
    expect((await inject({ action: 'quality_check', content: 'Kveik question?' })).statusCode).toBe(200);
    expect(worker.output().match(/ai engine loaded/g)).toHaveLength(1);
  });
});
