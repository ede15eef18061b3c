import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { startMetricsServer, type MetricsServer } from '../../workers/metrics-server.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { registry } from '../../shared/metrics.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** Prometheus exposition of the services (/metrics) and of a worker process (its own listener). */

/** The value of one sample line, e.g. sample(text, 'agora_x_total{a="b"}'); undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let pool: WorkerPool | undefined;
  let server: MetricsServer | undefined;

  beforeAll(async () => {
    // The registry is the process's, and test files share their process (vitest.config.ts): count from zero.
    registry.resetMetrics();
    runtime = await createTestRuntime({
      RATE_LIMIT_ANONYMOUS_HOURLY: '100000',
      RATE_LIMIT_ANONYMOUS_DAILY: '100000',
    });
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
  });
  afterAll(async () => {
    await server?.close();
    await pool?.close(5000);
    await qa?.close();
    await verify?.close();
    await runtime?.close();
  });

  it('counts and times HTTP requests by route pattern and status on both services', async () => {
    for (let i = 0; i < 3; i++) expect((await qa.inject('/api/categories')).statusCode).toBe(200);
    expect((await qa.inject('/no/such/route/12345')).statusCode).toBe(404);
    expect(
      (await verify.inject({ method: 'POST', url: '/verify', payload: { email: 'a@b.c' } })).statusCode,
    ).toBe(401);

    const response = await qa.inject('/metrics');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = response.body;
    expect(
      sample(
        text,
        'agora_http_requests_total{service="qa",method="GET",route="/api/categories",status="200"}',
      ),
    ).toBe(3);
    // A request no route matched is "unmatched", never its raw URL (which would grow the series without bound).
    expect(
      sample(text, 'agora_http_requests_total{service="qa",method="GET",route="unmatched",status="404"}'),
    ).toBe(1);
    expect(text).not.toContain('/no/such/route');
    expect(
      sample(
        text,
        'agora_http_request_duration_seconds_count{service="qa",method="GET",route="/api/categories",status="200"}',
      ),
    ).toBe(3);
    expect(text).toMatch(
      /agora_http_request_duration_seconds_bucket\{le="0\.005",service="qa",method="GET",route="\/api\/categories",status="200"\} \d+/,
    );

    const verifyText = (await verify.inject('/metrics')).body;
    expect(
      sample(
        verifyText,
        'agora_http_requests_total{service="verify",method="POST",route="/verify",status="401"}',
      ),
    ).toBe(1);
    // Every metric of the catalog is exported, so dashboards find them before the first event.
    for (const name of [
      'agora_rate_limit_rejections_total',
      'agora_job_duration_seconds',
      'agora_job_failures_total',
      'agora_verification_results_total',
      'agora_newsletter_digests_sent_total',
      'agora_queue_jobs',
      'process_cpu_user_seconds_total',
    ]) {
      expect(verifyText).toContain(`# TYPE ${name} `);
    }
  });

  it('reports queue depth read from Redis at scrape time', async () => {
    await runtime.queues.enqueue('ping', 'echo', { message: 'waiting for a worker' });
    await runtime.queues.enqueue('ping', 'echo', { message: 'delayed' }, { delay: 60_000 });
    const text = (await qa.inject('/metrics')).body;
    expect(sample(text, 'agora_queue_jobs{queue="ping",state="waiting"}')).toBe(1);
    expect(sample(text, 'agora_queue_jobs{queue="ping",state="delayed"}')).toBe(1);
    expect(sample(text, 'agora_queue_jobs{queue="verify",state="waiting"}')).toBe(0);
  });

  it('serves job durations and failures from a worker’s own listener', async () => {
    pool = await startWorkerPool(runtime, ['ping']);
    server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      logger: runtime.logger,
      queues: runtime.queues,
      served: pool.queues,
    });
    const base = `http://127.0.0.1:${server.port}`;

    await runtime.queues.enqueueAndWait('ping', 'echo', { message: 'hello' }, 20_000);
    // A payload the catalog rejects fails at once, for good (no retry can fix it).
    const bad = await runtime.queues.queue('ping').add('echo', { message: 42 });
    await expect.poll(async () => (await bad.getState()) === 'failed', { timeout: 20_000 }).toBe(true);

    const metrics = async () =>
      (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    await expect
      .poll(
        async () => sample(await metrics(), 'agora_job_failures_total{queue="ping",job="echo",final="true"}'),
        { timeout: 10_000 },
      )
      .toBe(1);
    const text = await metrics();
    expect(
      sample(text, 'agora_job_duration_seconds_count{queue="ping",job="echo",outcome="completed"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'agora_job_duration_seconds_count{queue="ping",job="echo",outcome="failed"}')).toBe(
      1,
    );

    const health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5000) });
    expect(health.status).toBe(200);
    const missing = await fetch(`${base}/nope`, { signal: AbortSignal.timeout(5000) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: true, code: 404, message: 'No route for GET /nope' });
    const post = await fetch(`${base}/metrics`, { method: 'POST', signal: AbortSignal.timeout(5000) });
    expect(post.status).toBe(405);
  });
});
