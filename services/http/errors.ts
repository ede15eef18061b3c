import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import { isDatabaseUnavailable } from '../../shared/db/unavailable.js';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { AppError, RETRY_AFTER_SECONDS } from '../../shared/errors.js';
import { answeredBeforeBody, lingerOnUnreadBody } from './linger.js';

/** The one error body of both services, as a schema: routes declare it for their 4xx/5xx responses. */
export const ErrorResponse = Type.Object(
  { error: Type.Literal(true), message: Type.String(), code: Type.Integer() },
  { description: 'Every error: the message is for humans, code equals the HTTP status' },
);

export type ErrorBody = Static<typeof ErrorResponse>;

export const errorBody = (code: number, message: string): ErrorBody => ({ error: true, message, code });

/** The status, message and headers an error leaves with (a 5xx never carries its real message). */
export function describeError(err: FastifyError | AppError | Error): {
  code: number;
  message: string;
  headers?: Record<string, string>;
} {
  if (err instanceof AppError) return { code: err.statusCode, message: err.message, headers: err.headers };
  const fastifyError = err as FastifyError;
  // Already in plain words, naming the field (validation.ts).
  if (fastifyError.validation) return { code: 400, message: fastifyError.message };
  // An outage, not a bug: the caller may retry shortly (docs/operations.md, "PostgreSQL outages").
  if (isDatabaseUnavailable(err))
    return {
      code: 503,
      message: 'Service temporarily unavailable; try again shortly',
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    };
  const status = fastifyError.statusCode;
  // Fastify's own client errors (bad JSON, body too large, unsupported media type) carry a safe message.
  if (status && status >= 400 && status < 500) return { code: status, message: fastifyError.message };
  return { code: 500, message: 'Internal server error' };
}

/** The messages of an error and its causes, e.g. "Failed query <- connect ECONNREFUSED 127.0.0.1:5432". */
function causes(err: unknown): string {
  const messages: string[] = [];
  for (let e = err; e instanceof Error && messages.length < 5; e = e.cause) messages.push(e.message);
  return messages.join(' <- ');
}

/** The client closed its connection before its request was whole (an upload cut short mid-body). */
const clientWentAway = (request: FastifyRequest): boolean =>
  !request.raw.complete && request.raw.socket?.destroyed === true;

/** Every error leaves as `{error, message, code}`; a 5xx never carries the real message, which is logged instead. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (clientWentAway(request)) {
      // Whatever failed (an 'aborted' ECONNRESET, an upload cut short) followed from the client leaving: not a
      // fault here, and nobody is left to answer.
      request.log.info({ err: causes(err) }, 'request abandoned by the client');
      reply.hijack();
      return;
    }
    const { code, message, headers } = describeError(err);
    // 503s of an outage come by the hundred: one line each, without the stack.
    if (code === 503) request.log.warn({ err: causes(err), code }, 'request refused: unavailable');
    else if (code >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code, message }, 'request rejected');
    if (headers) reply.headers(headers);
    lingerOnUnreadBody(request, reply);
    return reply.status(code).send(errorBody(code, message));
  });

  app.setNotFoundHandler((request, reply) => {
    // The path is the caller's input: quoted short, as every message quotes input.
    const path = request.url.split('?')[0]!;
    const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
    return reply.status(404).send(errorBody(404, `No route for ${request.method.slice(0, 20)} ${shown}`));
  });
}

/**
 * How long a socket answered by clientErrorHandler stays open for its client to read the answer. Node's HTTP server
 * lets a socket stay half-open after our end() for as long as the client keeps its side open, so a client that
 * ignores a 408 and goes on sending (or says nothing) would keep the socket, and the request still reading it (an
 * upload's transaction), for ever.
 */
export const CLIENT_ERROR_GRACE_MS = 2000;

/**
 * Errors the HTTP parser raises before Fastify routes anything (a malformed request line, headers too large) and
 * a request not whole by the request timeout (408) still get our body; this is passed as Fastify's
 * `clientErrorHandler`. Then the socket is closed.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (socket.destroyed) return;
  const grace = setTimeout(() => socket.destroy(), CLIENT_ERROR_GRACE_MS).unref();
  socket.once('close', () => clearTimeout(grace));
  // A request already answered (a 401 or 413 sent before its body, whose rest lingerOnUnreadBody was draining, or a
  // response under way) has its answer: a second one after it would be read as the answer to a request the client
  // never sent. The socket only closes.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (!socket.writable || inFlight?.headersSent || answeredBeforeBody.has(socket)) {
    // An answer decided before the body but still on its way (its onSend hooks run) is written first: a request
    // whose headers and broken body came in one packet would otherwise lose its 401 with the socket.
    if (inFlight && !inFlight.headersSent && socket.writable) finished(inFlight, () => socket.end());
    else socket.end();
    return;
  }
  const code = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify(errorBody(code, STATUS_CODES[code] ?? 'Bad Request'));
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
