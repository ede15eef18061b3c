/**
 * Whether an error means "the database cannot be reached or cannot answer now" rather than "this statement is
 * wrong": the request may succeed if retried shortly, so a service answers 503 with Retry-After (never a 500)
 * and a worker puts the job back without spending an attempt. Drizzle wraps the driver's error in `cause`, so
 * the whole chain is looked at.
 */

/** The driver's own codes (postgres.js) and the socket's (Node) for a connection that failed or was lost. */
const CONNECTION_CODES = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server going away or overloaded: class 08 (connection exception), 57P01 admin_shutdown (a
 * fast shutdown terminates sessions), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting or stopping),
 * 53300 too_many_connections, 57014 query_canceled (the statement timeout: the server is too slow right now).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

/** The `code`s along an error's `cause` chain (drizzle wraps the driver's error), outermost first. */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let current = err, depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return errorCodes(err).some(
    (code) => CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code),
  );
}
