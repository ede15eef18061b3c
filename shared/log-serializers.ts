import { pino } from 'pino';

/**
 * What request and error log lines may carry. Logs are read by more people, kept longer and shipped further
 * than the database, so they get neither the bearer tokens that travel in query strings (newsletter confirm and
 * unsubscribe links) nor the SQL text and bound parameters of a failed query (user content, addresses, hashes).
 */

// Query parameters whose value is a credential: token, *_token, key, api_key, secret, signature, sig, password.
const SECRET_PARAM = /^(?:[\w-]*token|key|api[_-]?key|[\w-]*secret|signature|sig|password)$/i;

/** `url` with the value of every credential-like query parameter replaced by `[redacted]`. */
export function redactUrlTokens(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  const params = url
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the raw name
      }
      return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair;
    });
  return `${url.slice(0, query)}?${params.join('&')}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's own request serializer, with the URL's tokens redacted. */
export function requestSerializer(req: LoggedRequest) {
  return {
    method: req.method,
    url: req.url === undefined ? undefined : redactUrlTokens(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

// Fields drivers and drizzle put on query errors: the statement, its parameters, and the row values PostgreSQL
// quotes back (`Key (email)=(…) already exists`).
const QUERY_FIELDS = ['query', 'params', 'parameters', 'args', 'detail', 'where', 'internal_query'];
const FAILED_QUERY = /^Failed query: [\s\S]*$/;
// In a stack, drizzle's message runs from "Failed query: " to the first frame line.
const FAILED_QUERY_IN_STACK = /Failed query: [\s\S]*?(?=\n\s+at |$)/g;
const WITHHELD = 'Failed query (SQL and parameters are not logged)';

type Serialized = Record<string, unknown> & { message?: string; stack?: string; cause?: unknown };

function scrub(value: unknown, depth: number): unknown {
  if (depth > 5 || typeof value !== 'object' || value === null) return value;
  const out: Serialized = { ...(value as Serialized) };
  for (const field of QUERY_FIELDS) delete out[field];
  if (typeof out.message === 'string' && FAILED_QUERY.test(out.message)) out.message = WITHHELD;
  if (typeof out.stack === 'string') out.stack = out.stack.replace(FAILED_QUERY_IN_STACK, WITHHELD);
  if (out.cause !== undefined) out.cause = scrub(out.cause, depth + 1);
  return out;
}

/** pino's error serializer (type, message, stack, cause, own fields) minus SQL text and query parameters. */
export function errorSerializer(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  return scrub(pino.stdSerializers.err(err), 0);
}
