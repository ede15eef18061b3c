import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { freePort } from '../support/ports.js';

/**
 * The deployment's shape without Docker: the three roles as separate processes against one PostgreSQL and one
 * Redis, started with the same commands as infra/k8s and infra/compose.yaml, each on its own port.
 */

const get = (url: string) => fetch(url, { signal: AbortSignal.timeout(5000) });

describe('qa, verify and workers as separate processes', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  const processes: RunningProcess[] = [];
  const ports = { qa: 0, verify: 0, metrics: 0 };
  let worker: RunningProcess;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    [ports.qa, ports.verify, ports.metrics] = await Promise.all([freePort(), freePort(), freePort()]);
    const env = {
      ...runtime.env,
      HOST: '127.0.0.1',
      QA_PORT: String(ports.qa),
      VERIFY_PORT: String(ports.verify),
      WORKER_METRICS_PORT: String(ports.metrics),
    };
    const qa = startProcess('bin/start.ts', ['--role', 'qa'], env);
    const verify = startProcess('bin/start.ts', ['--role', 'verify'], env);
    worker = startProcess('workers/main.ts', ['--queues', 'ping'], env);
    processes.push(qa, verify, worker);
    await Promise.all([
      qa.waitFor(/Server listening/, 90_000),
      verify.waitFor(/Server listening/, 90_000),
      worker.waitFor(/worker metrics listening/, 90_000),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGTERM')));
    await runtime?.close();
  });

  it('each service answers /ready (PostgreSQL and Redis reachable) and /health', async () => {
    for (const port of [ports.qa, ports.verify]) {
      const ready = await get(`http://127.0.0.1:${port}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ready',
        dependencies: { postgres: 'ok', redis: 'ok' },
        ...(port === ports.qa ? { search_index: 'gin' } : {}),
      });
      expect((await get(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    }
  });

  // Bounds for a loaded CI machine (the whole suite beside it): alone this takes well under a second.
  it(
    'the worker process does a ping job and reports it on its metrics listener',
    { timeout: 120_000 },
    async () => {
      const result = (await runtime.queues.enqueueAndWait(
        'ping',
        'echo',
        { message: 'across processes', requestId: 'roles-1' },
        90_000,
      )) as {
        message: string;
        worker: number;
      };
      expect(result).toMatchObject({ message: 'across processes', worker: worker.child.pid });
      await worker.waitFor(/"reqId":"roles-1"/);
      // The producer learns of the completion from Redis, and the worker observes its histogram on
      // its own `completed` event a moment later: poll the listener rather than read it once.
      await expect
        .poll(async () => (await get(`http://127.0.0.1:${ports.metrics}/metrics`)).text(), {
          timeout: 30_000,
          interval: 100,
        })
        .toMatch(/^agora_job_duration_seconds_count\{queue="ping",job="echo",outcome="completed"\} [1-9]/m);
    },
  );

  it('each role stops cleanly on SIGTERM', async () => {
    const codes = await Promise.all(processes.map((p) => p.stop('SIGTERM')));
    expect(codes).toEqual([0, 0, 0]);
  });
});
