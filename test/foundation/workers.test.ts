import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

// Child processes compile TypeScript on start: give these tests room on a loaded 2-core machine.
describe('workers as separate processes', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  const started: RunningProcess[] = [];
  /** Matches a worker's output once it has logged the start of `count` echo jobs. */
  const echoes = (count: number) => new RegExp(Array(count).fill('"msg":"echo"').join('[\\s\\S]*'));
  const worker = (...args: string[]) => {
    const p = startProcess('workers/main.ts', args, runtime.env);
    started.push(p);
    return p;
  };

  beforeAll(async () => {
    // Short locks so a killed worker's job is taken over within seconds (lock and stalled check: ~10 s at most,
    // well inside the 60 s waits), yet long enough that a just-booted heir on a loaded machine does not miss a
    // renewal: a second stall would fail the job (maxStalledCount 1).
    runtime = await createTestRuntime({ WORKER_LOCK_MS: '5000' });
    app = await buildQaApp(runtime);
  });
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop('SIGKILL')));
    await app.close();
    await runtime.close();
  });

  // One worker serves both: a process start costs seconds on a loaded machine.
  it('completes a job enqueued from the app in another process, and drains the job in flight on SIGTERM', async () => {
    const w = worker('--queues', 'ping');
    await w.waitFor(/workers started/);
    const result = (await runtime.queues.enqueueAndWait(
      'ping',
      'echo',
      { message: 'hello', requestId: 'req-1' },
      15_000,
    )) as {
      message: string;
      worker: number;
    };
    expect(result.message).toBe('hello');
    expect(result.worker).toBe(w.child.pid);
    // The job's log lines carry the request id of the request that enqueued it.
    await w.waitFor(/"reqId":"req-1"/);

    const events = await import('bullmq').then(
      ({ QueueEvents }) =>
        new QueueEvents('ping', {
          connection: { url: runtime.redisUrl },
          prefix: runtime.config.queuePrefix,
        }),
    );
    await events.waitUntilReady();
    const job = await runtime.queues.enqueue('ping', 'echo', { message: 'slow', delayMs: 1500 });
    await w.waitFor(echoes(2));
    w.child.kill('SIGTERM');
    expect(await job.waitUntilFinished(events, 15_000)).toMatchObject({ message: 'slow' });
    expect(await w.exited).toBe(0);
    await events.close();
  });

  // The worker that takes the killed worker's job over has a short shutdown deadline: the next case stops it.
  let impatient: RunningProcess;

  it('loses no job when a worker is killed mid-job: another worker takes it over', async () => {
    const first = worker('--queues', 'ping');
    await first.waitFor(/workers started/);
    // Room for the heir's start and the stalled-job check on a loaded machine.
    const finished = runtime.queues.enqueueAndWait(
      'ping',
      'echo',
      { message: 'survivor', delayMs: 1000 },
      60_000,
    );
    await first.waitFor(echoes(1));
    await first.stop('SIGKILL');
    impatient = startProcess('workers/main.ts', ['--queues', 'ping'], {
      ...runtime.env,
      SHUTDOWN_TIMEOUT_MS: '300',
    });
    started.push(impatient);
    const result = (await finished) as { message: string; worker: number; attempt: number };
    expect(result.message).toBe('survivor');
    expect(result.worker).toBe(impatient.child.pid);
  });

  it('stops at the shutdown deadline and leaves an unfinished job to another worker', async () => {
    const finished = runtime.queues.enqueueAndWait(
      'ping',
      'echo',
      { message: 'long', delayMs: 4000 },
      60_000,
    );
    await impatient.waitFor(echoes(2));
    impatient.child.kill('SIGTERM');
    expect(await impatient.exited).toBe(0);
    expect(impatient.output()).toContain('left to other workers');
    const heir = worker('--queues', 'ping');
    const result = (await finished) as { message: string; worker: number };
    expect(result).toMatchObject({ message: 'long', worker: heir.child.pid });
    await heir.stop();
  });

  it('refuses to start for a queue that does not exist', async () => {
    const w = worker('--queues', 'ping,nonsense');
    expect(await w.exited).not.toBe(0);
    expect(w.output()).toMatch(/No worker for queue\(s\): nonsense/);
  });
});
