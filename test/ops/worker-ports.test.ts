import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess, type RunningProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * Two worker processes on one host with the same WORKER_METRICS_PORT, as two replicas of one command would be:
 * the second takes the next free port instead of failing on EADDRINUSE, and both serve their metrics.
 */

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const listeningPort = (output: string): number => {
  const line = output.split('\n').find((l) => l.includes('"msg":"worker metrics listening"'));
  if (!line) throw new Error(`no metrics listener in:\n${output.slice(-2000)}`);
  return (JSON.parse(line) as { port: number }).port;
};

describe('two worker processes on one host', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  const workers: RunningProcess[] = [];
  let configured: number;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    configured = await freePort();
    const env = { ...runtime.env, HOST: '127.0.0.1', WORKER_METRICS_PORT: String(configured) };
    // One after the other, so that which one gets the configured port is known.
    for (let i = 0; i < 2; i++) {
      const worker = startProcess('workers/main.ts', ['--queues', 'ping'], env);
      workers.push(worker);
      await worker.waitFor(/"msg":"ready"/, 90_000);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGTERM')));
    await runtime?.close();
  });

  it('each gets its own metrics port, the configured one first, without an error', async () => {
    const ports = workers.map((w) => listeningPort(w.output()));
    expect(ports[0]).toBe(configured);
    expect(ports[1]).toBeGreaterThan(configured);
    for (const worker of workers) expect(worker.output()).not.toMatch(/EADDRINUSE|listener not started/);

    for (const port of ports) {
      const health = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5000) });
      expect(await health.json()).toEqual({ status: 'ok' });
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) });
      expect(await metrics.text()).toMatch(/^agora_queue_jobs\{queue="ping",state="waiting"\} \d+/m);
    }
  });

  it('both stop cleanly', async () => {
    expect(await Promise.all(workers.map((w) => w.stop('SIGTERM')))).toEqual([0, 0]);
  });
});
