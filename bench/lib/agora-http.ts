import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The public HTTP calls bench/multi-host.ts makes to the services (each one with a timeout), and a reader of a
 * worker's Prometheus metrics.
 */

export interface Result {
  email: string;
  status: string;
  reason: string;
}

async function call<T>(url: string, init: RequestInit, timeoutMs: number, ok = [200]): Promise<T> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  if (!ok.includes(res.status))
    throw new Error(`${init.method ?? 'GET'} ${url} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

export const bulkVerify = async (base: string, key: string, emails: string[]): Promise<Result[]> =>
  (
    await call<{ data: Result[] }>(
      `${base}/bulk-verify`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ emails }),
      },
      120_000,
    )
  ).data;

export const uploadList = async (
  base: string,
  key: string,
  name: string,
  emails: string[],
): Promise<string> =>
  (
    await call<{ data: { id: string } }>(
      `${base}/lists?name=${name}`,
      {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'x-api-key': key },
        body: emails.join('\n') + '\n',
      },
      60_000,
      [202],
    )
  ).data.id;

export interface ListView {
  status: string;
  total: number;
  processed: number;
  counts: Record<string, number>;
}

export const listView = async (base: string, key: string, id: string): Promise<ListView> =>
  (await call<{ data: ListView }>(`${base}/lists/${id}`, { headers: { 'x-api-key': key } }, 10_000)).data;

/** Polls the list until it ended (completed, failed or cancelled); throws after timeoutMs. */
export async function listEnded(base: string, key: string, id: string, timeoutMs: number): Promise<ListView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await listView(base, key, id).catch(() => undefined);
    if (view && ['completed', 'failed', 'cancelled'].includes(view.status)) return view;
    if (Date.now() > deadline) throw new Error(`list ${id} not ended within ${timeoutMs} ms`);
    await sleep(500);
  }
}

/** Every result row of a list (ndjson: the whole list, unpaged). */
export async function listResults(
  base: string,
  key: string,
  id: string,
): Promise<(Result & { row: number })[]> {
  const res = await fetch(`${base}/lists/${id}/results?format=ndjson`, {
    headers: { 'x-api-key': key },
    signal: AbortSignal.timeout(60_000),
  });
  if (!res.ok) throw new Error(`GET /lists/${id}/results answered ${res.status}`);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Result & { row: number });
}

/** Completed jobs per queue, from a worker's `GET /metrics` (agora_job_duration_seconds_count). */
export async function completedJobs(metricsUrl: string): Promise<Map<string, number>> {
  const res = await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(5000) });
  const jobs = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^agora_job_duration_seconds_count\{([^}]*)\} (\d+)/.exec(line);
    if (!m || !m[1]!.includes('outcome="completed"')) continue;
    const queue = /queue="([^"]+)"/.exec(m[1]!)?.[1] ?? '?';
    jobs.set(queue, (jobs.get(queue) ?? 0) + Number(m[2]));
  }
  return jobs;
}

/**
 * `after − before` per queue, as `queue n` pairs: bulk jobs and list chunks (host jobs are served by the verifier's own
 * BullMQ worker, outside the job metrics; the mail servers' RCPT counts per prober show who probed).
 */
export const jobsBetween = (before: Map<string, number>, after: Map<string, number>): string =>
  ['verify', 'verify-lists'].map((q) => `${q} ${(after.get(q) ?? 0) - (before.get(q) ?? 0)}`).join(', ');
