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

/** LoadResult plus the 2xx count and the slowest request, for benches that report them. */
export interface DetailedLoadResult extends LoadResult {
  ok2xx: number;
  maxLatency: number;
}

const summarise = (result: autocannon.Result): LoadResult => ({
  requestsPerSecond: Math.round(result.requests.average),
  p50: result.latency.p50,
  p99: result.latency.p99,
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
});

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
  return summarise(result);
}

/**
 * A run whose requests are built per request (`setupRequest`: a body or client address of its own), with a
 * request timeout of `timeoutSeconds` (autocannon's default, 10, unless given).
 */
export async function runRequests(
  url: string,
  options: {
    connections: number;
    durationSeconds: number;
    requests: autocannon.Request[];
    timeoutSeconds?: number;
  },
): Promise<DetailedLoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: options.timeoutSeconds ?? 10,
    requests: options.requests,
  });
  return { ...summarise(result), ok2xx: result['2xx'], maxLatency: result.latency.max };
}
