import autocannon from 'autocannon';

/** One autocannon run, bounded by duration, reduced to the figures the docs report. */
export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export async function runLoad(
  url: string,
  options: { connections?: number; durationSeconds?: number; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 64,
    duration: options.durationSeconds ?? 10,
    headers: options.headers,
    timeout: 10,
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
